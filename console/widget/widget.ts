/**
 * The embeddable chat widget, served at /widget.js (src/http/console.ts) for any site to load:
 *
 *   <script src="{PUBLIC_URL}/widget.js" data-agent="@handle" defer></script>
 *
 * It adds a chat bubble to the host page that opens a chat with that public agent. Everything is
 * drawn inside a shadow root, so the host's styles and ours never meet; the styles are a
 * constructable stylesheet, which a host's Content-Security-Policy does not govern (a <style>
 * element would need `style-src 'unsafe-inline'`). The questions go from the host page straight
 * to the service, so the agent's allowed origins judge the host's real Origin.
 *
 * The conversation id (the visitor's credential for it) is kept in the host page's own
 * localStorage: first-party for the host, so it survives where browsers block third-party storage.
 */
import { ask, getAgent, getConversation, Refused, type AgentCard, type Source } from './ask.ts';
import css from './widget.css?inline';

/** Replaced by the service with its REST base path (REST_BASE_PATH) when it serves this file. */
const REST_BASE = '%%AGENTBASE_REST_BASE%%';

interface Saved {
  conversationId?: string;
  visitorId?: string;
  /** The panel was open when the visitor left the page: it opens again on the next one. */
  open?: boolean;
}

const NOT_HERE = 'This assistant is not available on this site.';
const NOT_AVAILABLE = 'This assistant is not available.';
const UNREACHABLE = 'The assistant cannot be reached right now. Try again later.';

type Child = Node | string | null | undefined | false;

/** An element with properties and attributes (`aria-*`, `role`, `for`, …) and children. */
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === true) el.setAttribute(name, '');
    else if (value !== false) el.setAttribute(name, value);
  }
  for (const child of children) if (child) el.append(child);
  return el;
}

function svg(path: string): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const icon = document.createElementNS(ns, 'svg');
  icon.setAttribute('viewBox', '0 0 24 24');
  icon.setAttribute('aria-hidden', 'true');
  icon.setAttribute('focusable', 'false');
  const p = document.createElementNS(ns, 'path');
  p.setAttribute('d', path);
  icon.append(p);
  return icon;
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    // Storage disabled by the visitor or a sandbox: the chat works, it just starts afresh.
    return null;
  }
}

function mount(script: HTMLScriptElement, agentRef: string): void {
  const api = `${new URL(script.src, location.href).origin}${REST_BASE}`;
  const key = `agentbase:${agentRef}`;
  const store = storage();
  const load = (): Saved => {
    try {
      return JSON.parse(store?.getItem(key) ?? '{}') as Saved;
    } catch {
      return {};
    }
  };
  const save = (change: Saved) => {
    try {
      store?.setItem(key, JSON.stringify({ ...load(), ...change }));
    } catch {
      // Full or refused: the next page load starts a new conversation.
    }
  };

  const host = h('div', { 'data-agentbase-widget': agentRef });
  const root = host.attachShadow({ mode: 'open' });
  if ('replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } else {
    // Older browsers: a <style>, which a strict host CSP may refuse (the chat still works unstyled).
    root.append(h('style', {}, css));
  }

  const bubble = h('button', { type: 'button', class: 'bubble', 'aria-label': 'Open chat', 'aria-haspopup': 'dialog', 'aria-expanded': 'false' }, svg('M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z'));
  const title = h('h2', { id: 'title' }, 'Chat');
  const about = h('p', { class: 'about', hidden: true });
  const close = h('button', { type: 'button', class: 'close', 'aria-label': 'Close chat' }, svg('M6 6l12 12M18 6L6 18'));
  const log = h('div', { class: 'log', role: 'log', 'aria-label': 'Conversation', tabindex: '0' });
  const notice = h('p', { class: 'notice', role: 'status' });
  const box = h('textarea', { id: 'message', rows: '2', placeholder: 'Ask a question', autocomplete: 'off' });
  const send = h('button', { type: 'submit', class: 'send' }, 'Send');
  const form = h('form', { class: 'ask', hidden: true }, h('label', { for: 'message', class: 'hide' }, 'Message'), box, send);
  const panel = h('section', { class: 'panel', role: 'dialog', 'aria-labelledby': 'title', hidden: true }, h('header', {}, h('div', {}, title, about), close), log, notice, form);
  root.append(bubble, panel);

  let agent: AgentCard | null = null;
  let loading: Promise<void> | null = null;
  let busy = false;
  let historyRead = false;

  function say(text: string) {
    notice.textContent = text;
  }

  function unavailable(err: unknown) {
    form.hidden = true;
    say(err instanceof Refused ? (err.status === 403 ? NOT_HERE : err.status === 404 ? NOT_AVAILABLE : err.message) : UNREACHABLE);
  }

  function addMessage(from: 'human' | 'agent', text: string, sources: Source[] = []): HTMLElement {
    const body = h('div', { class: 'text' }, text);
    const item = h('div', { class: `msg ${from}` }, h('span', { class: 'hide' }, from === 'human' ? 'You: ' : `${agent?.name ?? 'Assistant'}: `), body);
    log.append(item);
    showSources(item, sources);
    log.scrollTop = log.scrollHeight;
    return item;
  }

  function showSources(item: HTMLElement, sources: Source[]) {
    const seen = new Set<string>();
    const links: HTMLElement[] = [];
    for (const s of sources) {
      const label = s.datasource_name || s.source || '';
      const where = s.source ?? '';
      if (!label || seen.has(label + where)) continue;
      seen.add(label + where);
      links.push(h('li', {}, /^https?:\/\//.test(where) ? h('a', { href: where, target: '_blank', rel: 'noopener noreferrer' }, label) : label));
    }
    if (links.length) item.append(h('div', { class: 'sources' }, h('p', {}, 'Sources'), h('ul', {}, ...links)));
  }

  /** The agent's card (again after a failure), then once per page the conversation so far. */
  function prepare(): Promise<void> {
    loading ??= (async () => {
      try {
        agent = await getAgent(api, agentRef);
      } catch (err) {
        loading = null;
        return unavailable(err);
      }
      title.textContent = agent.name;
      about.textContent = agent.description ?? '';
      about.hidden = !agent.description;
      form.hidden = false;
      say('');
      const { conversationId } = load();
      if (historyRead) return;
      historyRead = true;
      if (!conversationId) return;
      try {
        const messages = await getConversation(api, conversationId);
        if (!messages) return save({ conversationId: undefined });
        for (const m of messages) addMessage(m.from, m.text, m.sources);
      } catch {
        say('The earlier messages could not be read.');
      }
    })();
    return loading;
  }

  async function open(focus: boolean) {
    panel.hidden = false;
    bubble.hidden = true;
    bubble.setAttribute('aria-expanded', 'true');
    save({ open: true });
    if (focus) close.focus();
    await prepare();
    if (focus && !panel.hidden) (form.hidden ? close : box).focus();
  }

  function shut() {
    panel.hidden = true;
    bubble.hidden = false;
    bubble.setAttribute('aria-expanded', 'false');
    save({ open: false });
    bubble.focus();
  }

  async function submit() {
    const query = box.value.trim();
    if (!query || busy || !agent) return;
    busy = true;
    // aria-disabled, not disabled: a disabled button would drop the keyboard focus it holds.
    send.setAttribute('aria-disabled', 'true');
    box.value = '';
    say('');
    addMessage('human', query);
    const item = addMessage('agent', '');
    const text = item.querySelector('.text')!;
    item.setAttribute('aria-busy', 'true');
    const { conversationId, visitorId } = load();
    try {
      const answer = await ask(api, agent.id, { query, conversationId, visitorId }, (piece) => {
        text.textContent += piece;
        log.scrollTop = log.scrollHeight;
      });
      save({ conversationId: answer.conversationId, visitorId: answer.visitorId });
      showSources(item, answer.sources);
    } catch (err) {
      item.remove();
      if (err instanceof TypeError) {
        // No answer at all: the service is unreachable, or it refused this site at the preflight
        // (its allowed origins changed). Reading the agent again tells which.
        loading = null;
        agent = null;
        await prepare();
        if (agent) say(UNREACHABLE);
      } else if (err instanceof Refused && (err.status === 403 || err.status === 404)) unavailable(err);
      else say(err instanceof Error ? err.message : String(err));
    } finally {
      item.removeAttribute('aria-busy');
      busy = false;
      send.removeAttribute('aria-disabled');
      log.scrollTop = log.scrollHeight;
      if (!form.hidden && panel.contains(root.activeElement)) box.focus();
    }
  }

  bubble.addEventListener('click', () => void open(true));
  close.addEventListener('click', shut);
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      shut();
    }
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void submit();
  });
  box.addEventListener('keydown', (e) => {
    // Enter sends, Shift+Enter starts a new line; never while an input method composes a word.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void submit();
    }
  });

  document.body.append(host);
  if (load().open) void open(false);
}

const script = document.currentScript as HTMLScriptElement | null;
const agentRef = script?.dataset.agent?.trim();
if (script && agentRef) {
  // A page (or a single-page app re-rendering its head) may run the snippet twice: one bubble per agent.
  const start = () => document.querySelector(`[data-agentbase-widget="${CSS.escape(agentRef)}"]`) || mount(script, agentRef);
  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start, { once: true });
} else {
  console.warn('agentbase widget: load it with <script src=".../widget.js" data-agent="@handle" defer></script>');
}
