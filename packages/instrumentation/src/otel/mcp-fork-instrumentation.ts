import type { Meter, MeterProvider, Tracer, TracerProvider } from '@opentelemetry/api';
import { InstrumentationBase, InstrumentationNodeModuleDefinition, InstrumentationNodeModuleFile } from '@opentelemetry/instrumentation';
import { ClientInstrumentation } from '../client/client-instrumentation.js';
import { createServerInstrumentation } from '../server/server-instrumentation.js';
import type { ServerInstrumentation } from '../server/types.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';
import { patchClient, patchClientTransport, unpatchClient, unpatchClientTransport } from './patch-client.js';
import { patchServerTransport, unpatchServerTransport } from './patch-server.js';
import { SDK_FILES, SUPPORTED_MCP_SDK_VERSIONS } from './supported-versions.js';
import type { McpForkInstrumentationConfig } from './types.js';

const SDK = '@modelcontextprotocol/sdk';

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
 * `node --import @forkwatch/instrumentation/register app.js`. It patches the MCP SDK 1.x's
 * Streamable HTTP transports when they load (ESM through import-in-the-middle, CommonJS through
 * require-in-the-middle): every server transport is observed on its first request, every client
 * transport's fetch is wrapped and its Client attached, exactly as the explicit API does.
 *
 * Spans held back by `requestSpanDelayMs` and undecided deliveries are emitted by
 * {@link forceFlush}, which is chained before the SDK's own `forceFlush`/`shutdown` of the tracer
 * provider it hands us, so `sdk.shutdown()` loses nothing. It never throws into the app.
 */
export class McpForkInstrumentation extends InstrumentationBase<McpForkInstrumentationConfig> {
  private serverFw: ServerInstrumentation | undefined;
  private clientFw: ClientInstrumentation | undefined;

  /** @param config see {@link McpForkInstrumentationConfig}; `enabled` defaults to true. */
  constructor(config: McpForkInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    const files: InstrumentationNodeModuleFile[] = [];
    const cfg = this.getConfig();
    if (cfg.server !== false) {
      for (const f of SDK_FILES.serverTransport) {
        files.push(new InstrumentationNodeModuleFile(`${SDK}/${f}`, SUPPORTED_MCP_SDK_VERSIONS, (e) => patchServerTransport(e, () => this.server()), (e) => unpatchServerTransport(e)));
      }
    }
    if (cfg.client !== false) {
      for (const f of SDK_FILES.clientTransport) {
        files.push(new InstrumentationNodeModuleFile(`${SDK}/${f}`, SUPPORTED_MCP_SDK_VERSIONS, (e) => patchClientTransport(e, () => this.client()), (e) => unpatchClientTransport(e)));
      }
      for (const f of SDK_FILES.client) {
        files.push(new InstrumentationNodeModuleFile(`${SDK}/${f}`, SUPPORTED_MCP_SDK_VERSIONS, (e) => patchClient(e, () => this.client()), (e) => unpatchClient(e)));
      }
    }
    return [new InstrumentationNodeModuleDefinition(SDK, SUPPORTED_MCP_SDK_VERSIONS, undefined, undefined, files)];
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

  private server(): ServerInstrumentation | undefined {
    if (!this.isEnabled()) return undefined;
    this.serverFw ??= createServerInstrumentation({ ...this.conventions(), ...this.getConfig().serverOptions, tracerProvider: this.provider, meterProvider: this.meters });
    return this.serverFw;
  }

  private client(): ClientInstrumentation | undefined {
    if (!this.isEnabled()) return undefined;
    this.clientFw ??= new ClientInstrumentation({ ...this.conventions(), ...this.getConfig().clientOptions, tracerProvider: this.provider, meterProvider: this.meters });
    return this.clientFw;
  }
}
