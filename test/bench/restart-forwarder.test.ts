/**
 * The `server-restart` fault's forwarder (bench/corpus/restart-forwarder.ts) over real sockets: a
 * stream through it dies with the server behind it (the restart cuts the call), a connection made
 * during the restart is held and reaches the new server (the resume meets the restarted server, not
 * a refusal), and the labels' reading of resumes (`resumeStatuses`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRestartForwarder } from '../../bench/corpus/restart-forwarder.js';
import { resumeStatuses } from '../../bench/corpus/restart-faults.js';

async function serve(name: string, onStream?: (res: http.ServerResponse) => void): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/stream' && onStream) return onStream(res);
    res.end(name);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

test('a stream through the forwarder is cut when its server stops; a request made during the restart reaches the new server', async () => {
  const fwd = await startRestartForwarder();
  const first = await serve('first', (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
  });
  try {
    fwd.retarget(first.port);
    assert.equal(await (await fetch(`http://127.0.0.1:${fwd.port}/`)).text(), 'first');
    const stream = await fetch(`http://127.0.0.1:${fwd.port}/stream`);
    const reader = stream.body!.getReader();
    await reader.read();
    fwd.retarget(undefined);
    await first.close();
    await assert.rejects(async () => {
      for (;;) if ((await reader.read()).done) throw new Error('ended without an error');
    });
    const during = fetch(`http://127.0.0.1:${fwd.port}/`, { headers: { connection: 'close' } }).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 100));
    const second = await serve('second');
    try {
      fwd.retarget(second.port);
      assert.equal(await during, 'second');
    } finally {
      await second.close();
    }
  } finally {
    await fwd.close();
  }
});

test('refused-restart: while refusing, a connection fails at once; afterwards one reaches the new server', async () => {
  const fwd = await startRestartForwarder();
  try {
    fwd.retarget('refuse');
    await assert.rejects(fetch(`http://127.0.0.1:${fwd.port}/`, { headers: { connection: 'close' } }));
    const next = await serve('next');
    try {
      fwd.retarget(next.port);
      assert.equal(await (await fetch(`http://127.0.0.1:${fwd.port}/`, { headers: { connection: 'close' } })).text(), 'next');
    } finally {
      await next.close();
    }
  } finally {
    await fwd.close();
  }
});

test('resumeStatuses lists what each Last-Event-ID request was answered, in order', () => {
  assert.equal(resumeStatuses([{ status: 200 }, { status: 404, lastEventId: 'e3' }, { status: 202 }, { status: 409, lastEventId: 'e4' }]), '404,409');
  assert.equal(resumeStatuses([{ status: 200 }]), 'none');
});
