/**
 * GraphiQL 5 marks each editor tab's <li> as role="tab" while the <li> holds two buttons (the
 * tab's and its close button): a tab with controls inside, which screen readers cannot reach
 * (axe: nested-interactive, serious). The tab strip becomes a labelled group of plain buttons,
 * the active one marked aria-current: every control reachable and named. React sets these
 * attributes only when it renders a tab, so an observer puts them back after each render.
 */
export function plainTabButtons(root: HTMLElement): void {
  const apply = () => {
    for (const list of root.querySelectorAll<HTMLElement>('[role="tablist"]')) {
      list.setAttribute('role', 'group');
      list.setAttribute('aria-label', 'Tabs');
    }
    for (const tab of root.querySelectorAll<HTMLElement>('[role="tab"]')) {
      const active = tab.getAttribute('aria-selected') === 'true';
      tab.setAttribute('role', 'none');
      tab.removeAttribute('aria-selected');
      const button = tab.querySelector('button');
      if (!button) continue;
      if (active) button.setAttribute('aria-current', 'true');
      else button.removeAttribute('aria-current');
    }
  };
  new MutationObserver(apply).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ['role', 'aria-selected'] });
  apply();
}
