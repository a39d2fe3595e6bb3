// The stored form of a fitted decision head. Defined beside the store's other records
// (src/store/store.ts), since the store sits below heads in the folder order (docs/layout.md).
export type { HeadRecord } from '../store/store.js';
