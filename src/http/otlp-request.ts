import { gunzip } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import { createError } from '../errors.js';
import type { OtlpFormat } from '../otlp/export-response.js';

/** The OTLP format of a request from its `Content-Type`, or undefined for any other type. */
export function formatOf(req: { headers: IncomingHttpHeaders }): OtlpFormat | undefined {
  const ct = req.headers['content-type'];
  if (typeof ct !== 'string') return undefined;
  const semi = ct.indexOf(';');
  const media = (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
  if (media === 'application/x-protobuf') return 'protobuf';
  if (media === 'application/json') return 'json';
  return undefined;
}

/** 'gzip', 'identity', or undefined for an encoding we do not accept. */
export function encodingOf(req: { headers: IncomingHttpHeaders }): 'gzip' | 'identity' | undefined {
  const ce = req.headers['content-encoding'];
  if (ce === undefined) return 'identity';
  const v = String(ce).trim().toLowerCase();
  if (v === 'gzip' || v === 'x-gzip') return 'gzip';
  if (v === '' || v === 'identity' || v === 'none') return 'identity';
  return undefined;
}

/** Inflates gzip, stopping (and failing) once the output would pass `max` bytes. */
export function gunzipBounded(body: Buffer, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    gunzip(body, { maxOutputLength: max }, (err, out) => {
      if (!err) return resolve(out);
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        reject(createError('FORKWATCH_ERR_DECOMPRESSED_TOO_LARGE', max));
      } else {
        reject(createError('FORKWATCH_ERR_BAD_GZIP', err.message));
      }
    });
  });
}
