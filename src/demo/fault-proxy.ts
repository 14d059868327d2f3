import net from 'node:net';

/** How a partitioned proxy treats a new connection. */
export type PartitionMode = 'refuse' | 'blackhole' | 'hold';

export interface FaultProxyOptions {
  /** Upstream host. Default `127.0.0.1`. */
  targetHost?: string;
  targetPort: number;
  /** Listen host. Default `127.0.0.1`; the port is always chosen by the OS. */
  host?: string;
  /**
   * During a partition, `refuse` accepts then destroys each new connection at once (the client
   * sees a reset); `blackhole` holds it silent until `heal()` destroys it; `hold` holds it until
   * `heal()` forwards it, as a TCP handshake retried through a short outage would succeed.
   * Default `refuse`.
   */
  mode?: PartitionMode;
  /** Connections held open in blackhole or hold mode before further ones are refused. Default 64. */
  maxHeld?: number;
}

/** Counters of a FaultProxy, cumulative since start. */
export interface FaultProxyStats {
  /** Connections forwarded upstream. */
  connections: number;
  /** Connections refused or black-holed during a partition. */
  refused: number;
  /** Open connections destroyed by `partition()`. */
  severed: number;
  /** Bytes client -> server. */
  bytesUp: number;
  /** Bytes server -> client. */
  bytesDown: number;
  partitions: number;
}

/**
 * A TCP proxy on 127.0.0.1 in front of an MCP server that can cut the network: `partition()`
 * destroys every open connection (both sides, so each end sees its peer vanish) and refuses or
 * black-holes new ones until `heal()`.
 */
export class FaultProxy {
  readonly stats: FaultProxyStats = { connections: 0, refused: 0, severed: 0, bytesUp: 0, bytesDown: 0, partitions: 0 };
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private readonly held = new Set<net.Socket>();
  private partitionedNow = false;
  private readonly server: net.Server;

  private constructor(private readonly opts: Required<FaultProxyOptions>) {
    this.server = net.createServer((socket) => this.onConnection(socket));
  }

  /** Starts a proxy listening on an OS-chosen port. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const proxy = new FaultProxy({
      targetHost: options.targetHost ?? '127.0.0.1',
      targetPort: options.targetPort,
      host: options.host ?? '127.0.0.1',
      mode: options.mode ?? 'refuse',
      maxHeld: options.maxHeld ?? 64,
    });
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, proxy.opts.host, () => {
        proxy.server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** The port the proxy listens on. */
  get port(): number {
    const addr = this.server.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  }

  /** `http://host:port` + path, for a client pointed at the proxy. */
  url(path = '/'): string {
    return `http://${this.opts.host}:${this.port}${path}`;
  }

  get partitioned(): boolean {
    return this.partitionedNow;
  }

  /** Connections currently forwarded. */
  get openConnections(): number {
    return this.pairs.size;
  }

  /** Cuts the network: destroys every open connection; new ones fail until `heal()`. */
  partition(): void {
    this.partitionedNow = true;
    this.stats.partitions++;
    for (const pair of this.pairs) {
      this.stats.severed++;
      pair.client.destroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
  }

  /** Restores the network; held connections are forwarded (`hold`) or destroyed (`blackhole`). */
  heal(): void {
    this.partitionedNow = false;
    const held = [...this.held];
    this.held.clear();
    for (const s of held) {
      if (this.opts.mode === 'hold' && !s.destroyed) {
        s.removeAllListeners('close');
        this.forward(s);
        s.resume();
      } else {
        s.destroy();
      }
    }
  }

  /** Stops listening and destroys every connection, held ones included. */
  async close(): Promise<void> {
    this.partition();
    for (const s of this.held) s.destroy();
    this.held.clear();
    this.partitionedNow = false;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(client: net.Socket): void {
    client.on('error', () => {});
    if (this.partitionedNow) {
      this.stats.refused++;
      if (this.opts.mode !== 'refuse' && this.held.size < this.opts.maxHeld) {
        this.held.add(client);
        client.on('close', () => this.held.delete(client));
        client.pause();
      } else {
        client.resetAndDestroy();
      }
      return;
    }
    this.forward(client);
  }

  private forward(client: net.Socket): void {
    this.stats.connections++;
    const upstream = net.connect(this.opts.targetPort, this.opts.targetHost);
    upstream.on('error', () => client.destroy());
    const pair = { client, upstream };
    this.pairs.add(pair);
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    upstream.on('close', drop);
    client.on('data', (chunk: Buffer) => {
      this.stats.bytesUp += chunk.length;
    });
    upstream.on('data', (chunk: Buffer) => {
      this.stats.bytesDown += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
