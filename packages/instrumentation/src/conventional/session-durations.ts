import { metrics, type Attributes, type Histogram, type Meter } from '@opentelemetry/api';
import { MCP_OPERATION_DURATION_BUCKETS, METRIC_MCP_CLIENT_SESSION_DURATION, METRIC_MCP_SERVER_SESSION_DURATION } from '../semconv.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';
import type { ConventionalOptions } from './operation-recorder.js';

/** A session being timed: when its `initialize` was seen, and the attributes its point will carry. */
interface OpenSession {
  startedAt: number;
  attrs: Attributes;
}

/**
 * `mcp.client.session.duration` / `mcp.server.session.duration` (option `mcpSemconv`): one point
 * per session, in seconds, from the `initialize` request until the transport closed, keyed by the
 * object that stands for the session (the server transport; the client). Attributes are the
 * conventions' low-cardinality ones (protocol version, network, `server.*` on the client); never a
 * session id. A session whose start forkwatch did not see (instrumented after `initialize`)
 * records nothing. The histogram comes from the meter provider current at the end (a no-op one
 * when the app has none). Never throws: a failing meter costs the point.
 */
export class SessionDurations {
  private readonly open = new WeakMap<object, OpenSession>();
  private readonly histograms = new WeakMap<Meter, Histogram>();
  private readonly metricName: string;

  constructor(
    private readonly side: 'client' | 'server',
    private readonly opts: Pick<ConventionalOptions, 'meterProvider' | 'logger'>,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.metricName = side === 'client' ? METRIC_MCP_CLIENT_SESSION_DURATION : METRIC_MCP_SERVER_SESSION_DURATION;
  }

  /** The session of `key` starts now (its `initialize` was sent or received); a second start is ignored. */
  start(key: object, attrs: Attributes): void {
    if (!this.open.has(key)) this.open.set(key, { startedAt: this.now(), attrs: { ...attrs } });
  }

  /** Adds or replaces attributes of the open session of `key` (e.g. the negotiated protocol version). */
  set(key: object, name: string, value: string | number): void {
    const s = this.open.get(key);
    if (s !== undefined) s.attrs[name] = value;
  }

  /** The session of `key` ended: records its duration once. `started` false: it never got a session (no point). */
  end(key: object, started: boolean): void {
    const s = this.open.get(key);
    if (s === undefined) return;
    this.open.delete(key);
    if (!started) return;
    try {
      this.histogram().record((this.now() - s.startedAt) / 1000, s.attrs);
    } catch (err) {
      this.opts.logger.debug(`${this.metricName} record failed`, err);
    }
  }

  private histogram(): Histogram {
    const meter = (this.opts.meterProvider ?? metrics.getMeterProvider()).getMeter(PACKAGE_NAME, PACKAGE_VERSION);
    let h = this.histograms.get(meter);
    if (h === undefined) {
      h = meter.createHistogram(this.metricName, {
        unit: 's',
        description: `The duration of the MCP session as observed on the MCP ${this.side}.`,
        advice: { explicitBucketBoundaries: [...MCP_OPERATION_DURATION_BUCKETS] },
      } as Parameters<Meter['createHistogram']>[1]);
      this.histograms.set(meter, h);
    }
    return h;
  }
}
