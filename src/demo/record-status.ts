import type http from 'node:http';

/** Reports the status a response is answered with, once, when its head is written (or it ends). */
export function recordStatus(res: http.ServerResponse, onStatus: (status: number) => void): void {
  let done = false;
  const report = (): void => {
    if (done) return;
    done = true;
    try {
      onStatus(res.statusCode);
    } catch {
      // an observer must not break the response
    }
  };
  const writeHead = res.writeHead;
  res.writeHead = function (this: http.ServerResponse, ...args: unknown[]) {
    const r = (writeHead as (...a: unknown[]) => http.ServerResponse).apply(this, args);
    report();
    return r;
  } as typeof res.writeHead;
  res.once('finish', report);
  res.once('close', report);
}
