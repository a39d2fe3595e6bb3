// What a fitted head records of the model it was fitted on: the model file's SHA-256. A manifest
// model at its cached path is the manifest's (verified when fetched); a file given by path is hashed.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { findModel } from './manifest.js';

export async function modelSha256(config: { model: string; modelPath?: string }): Promise<string> {
  const entry = findModel(config.model);
  if (config.modelPath === undefined && entry) return entry.sha256;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(config.modelPath!)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
