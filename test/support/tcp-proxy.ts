/**
 * A TCP proxy in front of the shared PostgreSQL, so a test can make the database go away for one
 * service without touching the server other test files use: `cut()` resets every open connection
 * and stops listening (new connections are refused), as a restarting server does; `restore()`
 * listens again on the same port.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections open through the proxy now. */
  open(): number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(0);
  const cut = async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    // resetAndDestroy: the peer sees ECONNRESET, as when a server process dies.
    for (const { client, upstream } of pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
    await closed;
  };
  return {
    port,
    open: () => pairs.size,
    cut,
    restore: async () => {
      if (!server.listening) await listen(port);
    },
    close: async () => {
      if (server.listening) await cut();
    },
  };
}
