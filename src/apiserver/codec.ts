// The storage codec lives in api/ (the wrapper stores served objects the same way); re-exported here.
export * from '../api/codec.js';
