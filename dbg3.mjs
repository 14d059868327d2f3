import { register, createRequire } from 'node:module';
const req = createRequire(import.meta.resolve('@opentelemetry/instrumentation'));
const iitm = req('import-in-the-middle');
register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
new iitm.Hook(['@modelcontextprotocol/sdk'], { internals: true }, (exp, name, baseDir) => console.log('HOOK', name));
const m = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
console.log('done', req.resolve('import-in-the-middle'));
