import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { FaultProxy } from '../../src/demo/fault-proxy.js';

/** A TCP echo server on 127.0.0.1:0. */
async function echoServer(): Promise<net.Server> {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

function roundTrip(s: net.Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    s.once('data', (d: Buffer) => resolve(d.toString()));
    s.write(text);
  });
}

function closed(s: net.Socket): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));
}

test('forwards bytes both ways and counts them', { timeout: 30_000 }, async () => {
  const echo = await echoServer();
  const proxy = await FaultProxy.start({ targetPort: (echo.address() as AddressInfo).port });
  try {
    assert.notEqual(proxy.port, 0);
    const s = await connect(proxy.port);
    assert.equal(await roundTrip(s, 'hello'), 'hello');
    assert.equal(proxy.stats.connections, 1);
    assert.equal(proxy.stats.bytesUp, 5);
    assert.equal(proxy.stats.bytesDown, 5);
    s.destroy();
  } finally {
    await proxy.close();
    echo.close();
  }
});

test('partition severs open connections and refuses new ones until heal', { timeout: 30_000 }, async () => {
  const echo = await echoServer();
  const proxy = await FaultProxy.start({ targetPort: (echo.address() as AddressInfo).port });
  try {
    const s = await connect(proxy.port);
    s.on('error', () => {});
    await roundTrip(s, 'x');
    proxy.partition();
    assert.equal(proxy.partitioned, true);
    await closed(s);
    assert.equal(proxy.stats.severed, 1);
    assert.equal(proxy.openConnections, 0);

    // A new connection is accepted by the kernel, then reset: no byte gets through.
    const refused = net.connect(proxy.port, '127.0.0.1');
    refused.on('error', () => {});
    await closed(refused);
    assert.equal(proxy.stats.refused, 1);
    assert.equal(proxy.stats.connections, 1);

    proxy.heal();
    const again = await connect(proxy.port);
    assert.equal(await roundTrip(again, 'back'), 'back');
    again.destroy();
  } finally {
    await proxy.close();
    echo.close();
  }
});

test('blackhole mode holds new connections silent and drops them on heal', { timeout: 30_000 }, async () => {
  const echo = await echoServer();
  const proxy = await FaultProxy.start({ targetPort: (echo.address() as AddressInfo).port, mode: 'blackhole' });
  try {
    proxy.partition();
    const s = await connect(proxy.port);
    s.on('error', () => {});
    let got = false;
    s.on('data', () => (got = true));
    s.write('anyone?');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(s.destroyed, false, 'held open while partitioned');
    proxy.heal();
    await closed(s);
    assert.equal(got, false);
  } finally {
    await proxy.close();
    echo.close();
  }
});

test('hold mode keeps new connections waiting and forwards them on heal', { timeout: 30_000 }, async () => {
  const echo = await echoServer();
  const proxy = await FaultProxy.start({ targetPort: (echo.address() as AddressInfo).port, mode: 'hold' });
  try {
    proxy.partition();
    const s = await connect(proxy.port);
    const answer = roundTrip(s, 'later');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(proxy.stats.connections, 0, 'nothing forwarded while partitioned');
    proxy.heal();
    assert.equal(await answer, 'later', 'the bytes written during the outage arrive after heal');
    assert.equal(proxy.stats.connections, 1);
    s.destroy();
  } finally {
    await proxy.close();
    echo.close();
  }
});
