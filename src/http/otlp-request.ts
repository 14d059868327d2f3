import { gunzip } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { createError } from '../errors.js';
import type { OtlpFormat } from '../otlp/export-response.js';

/** The OTLP format of a request from its `Content-Type`, or undefined for any other type. */
export function formatOf(req: FastifyRequest): OtlpFormat | undefined {
  const ct = req.headers['content-type'];
  if (typeof ct !== 'string') return undefined;
  const semi = ct.indexOf(';');
  const media = (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
  if (media === 'application/x-protobuf') return 'protobuf';
  if (media === 'application/json') return 'json';
  return undefined;
}

/** 'gzip', 'identity', or undefined for an encoding we do not accept. */
export function encodingOf(req: FastifyRequest): 'gzip' | 'identity' | undefined {
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

/** Rejects when `p` has not settled within `ms`; a sink that never answers must not pin requests. */
export function withTimeout(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`ingest sink did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
