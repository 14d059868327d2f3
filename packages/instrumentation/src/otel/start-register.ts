import { diag, metrics, trace, ProxyTracerProvider, type TracerProvider } from '@opentelemetry/api';
import { McpForkInstrumentation } from './mcp-fork-instrumentation.js';
import { setFirstUse } from './first-use.js';
import { notice } from './notice.js';
import { readRegisterEnv } from './register-env.js';

type NodeSdkModule = Pick<typeof import('@opentelemetry/sdk-node'), 'NodeSDK'>;
type Flushable = TracerProvider & { forceFlush?: () => Promise<void>; getDelegate?: () => TracerProvider };

// The api's own no-op delegate, what an unregistered global proxy hands out.
const NOOP_DELEGATE = new ProxyTracerProvider().getDelegate();

/** Whether a tracer provider is registered globally (by the app's own NodeSDK, say). */
export function globalProviderRegistered(): boolean {
  const p = trace.getTracerProvider() as Flushable;
  if (typeof p.getDelegate !== 'function') return true;
  const d = p.getDelegate();
  return d !== NOOP_DELEGATE && d?.constructor?.name !== 'NoopTracerProvider';
}

/** How `/register` ended up exporting: not decided yet, through its own NodeSDK, or through the app's provider. */
export type RegisterMode = 'pending' | 'own' | 'joined';

/** What {@link startRegister} returns. */
export interface RegisterHandle {
  instrumentation: McpForkInstrumentation;
  mode(): RegisterMode;
  /** Flushes forkwatch's held spans, then shuts its own SDK down (own) or flushes the app's provider (joined). */
  stop(): Promise<void>;
}

/**
 * The body of `/register` (ESM and CommonJS): enables {@link McpForkInstrumentation} at once (its
 * patches must be in place before the app loads the MCP SDK), but decides where spans go only on
 * its first use, just before anything emits: if the app registered a tracer provider by then (its
 * own NodeSDK), forkwatch joins it (its spans go through the app's provider, one stderr line says
 * so, the app's telemetry stays the app's); otherwise it starts a NodeSDK configured by `OTEL_*`.
 * Shuts down (or flushes) on a natural exit and on SIGTERM/SIGINT.
 */
export function startRegister(sdkNode: NodeSdkModule, env: NodeJS.ProcessEnv = process.env): RegisterHandle {
  const read = readRegisterEnv(env);
  for (const warning of read.warnings) diag.warn(warning);
  const instrumentation = new McpForkInstrumentation({ serverOptions: read.options, clientOptions: read.options });
  let mode: RegisterMode = 'pending';
  let sdk: { shutdown(): Promise<void> } | undefined;

  setFirstUse(instrumentation, () => {
    if (globalProviderRegistered()) {
      mode = 'joined';
      notice(
        'joined',
        "the app registered its own OpenTelemetry tracer provider: forkwatch's spans go through it (to its exporters), no second SDK started. " +
          'To configure forkwatch there instead: new NodeSDK({ instrumentations: [new McpForkInstrumentation()] }) and drop /register',
      );
    } else {
      const own = new sdkNode.NodeSDK({});
      own.start();
      sdk = own;
      mode = 'own';
    }
    // Spans and histograms follow the global providers from now on; our flush is chained before theirs.
    instrumentation.setTracerProvider(trace.getTracerProvider());
    instrumentation.setMeterProvider(metrics.getMeterProvider());
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= instrumentation
      .forceFlush()
      .then(async () => {
        if (sdk) await sdk.shutdown();
        else if (mode === 'joined') await flushJoined();
      })
      .catch((err: unknown) => diag.warn('forkwatch: shutdown failed', err)));

  process.once('beforeExit', () => void stop());
  for (const [signal, number] of [['SIGTERM', 15], ['SIGINT', 2]] as const) {
    const onSignal = (): void => {
      // Another listener (the app's) owns the exit; ours only gets the spans out meanwhile.
      const appHandles = process.listenerCount(signal) > 0;
      void stop().then(() => {
        if (!appHandles) process.exit(128 + number);
      });
    };
    process.once(signal, onSignal);
  }
  return { instrumentation, mode: () => mode, stop };
}

/** Flushes the app's provider (joined): the app may exit without shutting its SDK down. */
async function flushJoined(): Promise<void> {
  const delegate = (trace.getTracerProvider() as Flushable).getDelegate?.() as Flushable | undefined;
  if (typeof delegate?.forceFlush === 'function') await delegate.forceFlush();
}
