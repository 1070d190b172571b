/**
 * The little of React the IDE's entry calls. React ships no types of its own and @types/react is
 * not installed: the console itself is Preact, React is here only because GraphiQL needs it.
 */
declare module 'react' {
  export function createElement(type: unknown, props?: Record<string, unknown> | null, ...children: unknown[]): unknown;
}

declare module 'react-dom/client' {
  export function createRoot(container: Element): { render(children: unknown): void; unmount(): void };
}
