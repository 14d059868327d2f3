/**
 * `@forkwatch/instrumentation`: semantic names and version. The explicit APIs are the `/server`
 * and `/client` entry points; `/register` instruments an app with zero code.
 */
export { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';
export { SCHEMA_VERSION } from './semconv.js';
export type { Side } from './semconv.js';
