export type * from './event-store.js';
export { WrongExpectedRevisionError } from './event-store.js';
export type * from './view-store.js';
export type * from './bus.js';
export type * from './asset-store.js';
