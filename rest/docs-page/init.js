// The docs page's only script of ours. It is a file, not inline, because the page's
// Content-Security-Policy allows scripts from this server alone; the document's address comes
// from the page, so this file is the same under any REST base path.
window.addEventListener('load', () => {
  const root = document.getElementById('swagger-ui');
  window.ui = window.SwaggerUIBundle({
    url: root.dataset.spec,
    domNode: root,
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // The default sends the document to validator.swagger.io: nothing leaves this server.
    validatorUrl: null,
  });
});
