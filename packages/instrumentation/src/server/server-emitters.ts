import type { DiagLogger, TracerProvider } from '@opentelemetry/api';
import { ATTR_SESSION_INCARNATION, ATTR_SESSION_INCARNATION_SOURCE } from '../semconv.js';
import { SpanEmitter } from '../common/span-emitter.js';
import type { Attrs, TransportState } from './internal-types.js';

/** The server's two emitters: spans of guarded transports carry `forkwatch.guarded`. */
export class ServerEmitters {
  readonly plain: SpanEmitter;
  readonly guarded: SpanEmitter;

  constructor(opts: { tracerProvider: TracerProvider; salt: string; recordRawSessionId: boolean; logger: DiagLogger }) {
    const emitterFor = (guarded: boolean): SpanEmitter =>
      new SpanEmitter({ side: 'server', tracerProvider: opts.tracerProvider, salt: opts.salt, recordRawSessionId: opts.recordRawSessionId, guarded, logger: opts.logger });
    this.plain = emitterFor(false);
    this.guarded = emitterFor(true);
  }

  of(state: TransportState | undefined): SpanEmitter {
    return state?.link ? this.guarded : this.plain;
  }

  incarnationAttrs(state: TransportState | undefined): Attrs {
    if (!state?.incarnation) return {};
    return {
      [ATTR_SESSION_INCARNATION]: state.incarnation,
      [ATTR_SESSION_INCARNATION_SOURCE]: state.link ? 'server' : 'observed',
    };
  }

  /** Spans that could not be emitted. */
  get failures(): number {
    return this.plain.failures + this.guarded.failures;
  }
}
