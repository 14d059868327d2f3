import type { Meter, MeterProvider, Tracer, TracerProvider } from '@opentelemetry/api';
import { InstrumentationBase, InstrumentationNodeModuleDefinition, InstrumentationNodeModuleFile } from '@opentelemetry/instrumentation';
import { ClientInstrumentation } from '../client/client-instrumentation.js';
import type { FetchLike } from '../client/types.js';
import { createStatelessClientTap } from '../client/v2/stateless-tap.js';
import { createServerInstrumentation } from '../server/server-instrumentation.js';
import type { ServerInstrumentation } from '../server/types.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';
import { patchClient, patchClientTransport, unpatchClient, unpatchClientTransport } from './patch-client.js';
import { patchServerTransport, unpatchServerTransport } from './patch-server.js';
import type { StatelessServerOptions } from '../server/v2/observe-stateless.js';
import { hookSdkCjs } from './cjs-hook.js';
import { runFirstUse } from './first-use.js';
import { patchCreateMcpHandler, unpatchCreateMcpHandler } from './patch-stateless.js';
import { SDK_FILES, type McpSdkPackage } from './supported-versions.js';
import { mayPatch } from './version-gate.js';
import type { McpForkInstrumentationConfig } from './types.js';

const SDK = '@modelcontextprotocol/sdk';
const V2_NODE = '@modelcontextprotocol/node';
const V2_SERVER = '@modelcontextprotocol/server';
const V2_CLIENT = '@modelcontextprotocol/client';
const V2_NODE_TRANSPORT = 'NodeStreamableHTTPServerTransport';

/** What a provider we were given must offer for forceFlush/shutdown to be chained to it. */
interface FlushableProvider extends TracerProvider {
  forceFlush?: () => Promise<void>;
  shutdown?: () => Promise<void>;
  getDelegate?: () => TracerProvider;
}

const CHAINED = Symbol('forkwatch.flushChained');

/**
 * The forkwatch MCP instrumentation as an OpenTelemetry `InstrumentationBase`:
 * `new NodeSDK({ instrumentations: [new McpForkInstrumentation()] })`, or zero code with
 * `node --import @forkwatch/instrumentation/register app.js`. It patches the MCP SDK's Streamable
 * HTTP transports when they load (ESM through import-in-the-middle, CommonJS through
 * require-in-the-middle), 1.x (`@modelcontextprotocol/sdk`) and 2.x (`@modelcontextprotocol/node`,
 * `/client`, and `/server`'s stateless `createMcpHandler`): every server transport is observed on
 * its first request, every client transport's fetch is wrapped and its Client attached, every
 * stateless server factory observed, exactly as the explicit API does. A version outside the
 * tested set (TESTED_MCP_SDK_VERSIONS) is left unpatched with one log line on stderr.
 *
 * Spans held back by `requestSpanDelayMs` and undecided deliveries are emitted by
 * {@link forceFlush}, which is chained before the SDK's own `forceFlush`/`shutdown` of the tracer
 * provider it hands us, so `sdk.shutdown()` loses nothing. It never throws into the app.
 */
export class McpForkInstrumentation extends InstrumentationBase<McpForkInstrumentationConfig> {
  private serverFw: ServerInstrumentation | undefined;
  private clientFw: ClientInstrumentation | undefined;
  // `declare`: set by enable(), which InstrumentationBase's constructor calls before our fields
  // would be initialised (an initialiser would then reset it).
  declare private cjsHook: { unhook(): void } | undefined;
  private tap: ReturnType<typeof createStatelessClientTap> | undefined;

  /** @param config see {@link McpForkInstrumentationConfig}; `enabled` defaults to true. */
  constructor(config: McpForkInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    const cfg = this.getConfig();
    // Every version reaches the patch ('*'), which checks the tested set itself: a version outside
    // it is left alone with one log line (mayPatch) rather than skipped in silence.
    const any = ['*'];
    const gated = <E>(pkg: McpSdkPackage, patch: (e: E) => E) => (e: E, version?: string): E => (mayPatch(pkg, version) ? patch(e) : e);
    const files: InstrumentationNodeModuleFile[] = [];
    const defs: InstrumentationNodeModuleDefinition[] = [];
    if (cfg.server !== false) {
      for (const f of SDK_FILES.serverTransport) {
        files.push(new InstrumentationNodeModuleFile(`${SDK}/${f}`, any, gated(SDK, (e) => patchServerTransport(e, () => this.server())), (e) => unpatchServerTransport(e)));
      }
      defs.push(new InstrumentationNodeModuleDefinition(V2_NODE, any, gated(V2_NODE, (e) => patchServerTransport(e, () => this.server(), V2_NODE_TRANSPORT)), (e) => unpatchServerTransport(e, V2_NODE_TRANSPORT)));
      defs.push(new InstrumentationNodeModuleDefinition(V2_SERVER, any, gated(V2_SERVER, (e) => patchCreateMcpHandler(e, () => this.statelessOptions(), () => runFirstUse(this))), (e) => unpatchCreateMcpHandler(e)));
    }
    if (cfg.client !== false) {
      for (const f of SDK_FILES.clientTransport) {
        files.push(new InstrumentationNodeModuleFile(`${SDK}/${f}`, any, gated(SDK, (e) => patchClientTransport(e, () => this.client())), (e) => unpatchClientTransport(e)));
      }
      for (const f of SDK_FILES.client) {
        files.push(new InstrumentationNodeModuleFile(`${SDK}/${f}`, any, gated(SDK, (e) => patchClient(e, () => this.client())), (e) => unpatchClient(e)));
      }
      const patchV2Client = (e: object): object => {
        patchClientTransport(e, () => this.client(), () => this.statelessTap());
        return patchClient(e, () => this.client());
      };
      defs.push(new InstrumentationNodeModuleDefinition(V2_CLIENT, any, gated(V2_CLIENT, patchV2Client), (e) => {
        unpatchClientTransport(e);
        unpatchClient(e);
      }));
    }
    return [new InstrumentationNodeModuleDefinition(SDK, any, undefined, undefined, files), ...defs];
  }

  /** Also hooks the SDK 1.x's CommonJS files, which OpenTelemetry's shared require hook cannot find. */
  override enable(): void {
    super.enable();
    if (this.cjsHook) return;
    const cfg = this.getConfig();
    this.cjsHook = hookSdkCjs((exports, file, version) => {
      if (file === 'serverTransport' ? cfg.server === false : cfg.client === false) return exports;
      if (!mayPatch(SDK, version)) return exports;
      const e = exports as never;
      if (file === 'serverTransport') return patchServerTransport(e, () => this.server());
      if (file === 'clientTransport') return patchClientTransport(e, () => this.client());
      return patchClient(e, () => this.client());
    });
  }

  override disable(): void {
    super.disable();
    this.cjsHook?.unhook();
    this.cjsHook = undefined;
  }

  /** Chains our flush before the provider's, so the SDK's shutdown exports our held spans. */
  override setTracerProvider(provider: TracerProvider): void {
    super.setTracerProvider(provider);
    try {
      const p = provider as FlushableProvider;
      const target = (typeof p.getDelegate === 'function' ? p.getDelegate() : p) as FlushableProvider & { [CHAINED]?: boolean };
      if (target[CHAINED]) return;
      for (const method of ['forceFlush', 'shutdown'] as const) {
        const original = target[method];
        if (typeof original !== 'function') continue;
        target[method] = (): Promise<void> => {
          this.flushSync();
          return original.call(target);
        };
      }
      target[CHAINED] = true;
    } catch (err) {
      this._diag.debug('could not chain forceFlush/shutdown', err);
    }
  }

  /** Emits held-back request spans and undecided deliveries now; resolves when emitted. */
  async forceFlush(): Promise<void> {
    this.flushSync();
  }

  /** Flushes, then stops patching new transports (those already observed stay observed). */
  async shutdown(): Promise<void> {
    this.flushSync();
    this.disable();
  }

  private flushSync(): void {
    try {
      this.serverFw?.flush();
      this.clientFw?.flush();
    } catch (err) {
      this._diag.debug('flush failed', err);
    }
  }

  /** Spans go to whatever provider the SDK set at the time they are made. */
  private readonly provider: TracerProvider = { getTracer: (): Tracer => this.tracer };

  /** The `mcpSemconv` histograms go to whatever meter provider the SDK set (setMeterProvider). */
  private readonly meters: MeterProvider = { getMeter: (): Meter => this.meter };

  /** `mcpSemconv` of the config's top level, applied to both sides unless a side's options say otherwise. */
  private conventions(): { mcpSemconv?: boolean; meterProvider: MeterProvider } {
    const on = this.getConfig().mcpSemconv;
    return on === undefined ? { meterProvider: this.meters } : { mcpSemconv: on, meterProvider: this.meters };
  }

  /** Options of the 2.x stateless servers (`createMcpHandler`); undefined when disabled. */
  private statelessOptions(): StatelessServerOptions | undefined {
    if (!this.isEnabled()) return undefined;
    const c = this.conventions();
    const delay = this.getConfig().serverOptions?.requestSpanDelayMs;
    const semconv = this.getConfig().serverOptions?.mcpSemconv ?? c.mcpSemconv;
    return { tracerProvider: this.provider, meterProvider: this.meters, ...(delay !== undefined ? { requestSpanDelayMs: delay } : {}), ...(semconv !== undefined ? { mcpSemconv: semconv } : {}) };
  }

  private server(): ServerInstrumentation | undefined {
    runFirstUse(this);
    if (!this.isEnabled()) return undefined;
    this.serverFw ??= createServerInstrumentation({ ...this.conventions(), ...this.getConfig().serverOptions, tracerProvider: this.provider, meterProvider: this.meters });
    return this.serverFw;
  }

  /** The 2.x stateless client tap's fetch wrapper (requests without a session); undefined when disabled. */
  private statelessTap(): ((fetch: FetchLike) => FetchLike) | undefined {
    if (!this.isEnabled()) return undefined;
    this.tap ??= createStatelessClientTap({ tracerProvider: this.provider });
    const tap = this.tap;
    return (fetch) => tap.wrapFetch(fetch as never) as FetchLike;
  }

  private client(): ClientInstrumentation | undefined {
    runFirstUse(this);
    if (!this.isEnabled()) return undefined;
    this.clientFw ??= new ClientInstrumentation({ ...this.conventions(), ...this.getConfig().clientOptions, tracerProvider: this.provider, meterProvider: this.meters });
    return this.clientFw;
  }
}
