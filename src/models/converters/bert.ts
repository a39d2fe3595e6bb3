// sentence-transformers BERT (safetensors + vocab.txt) -> GGUF for llama.cpp's `bert` architecture,
// the way llama.cpp's own convert_hf_to_gguf.py names things: weight matrices in Q8_0 (cosines
// within 0.005 of F16's, docs/models.md), norms, biases and the embeddings
// that are added to activations in F32, the WordPiece vocabulary with "##" pieces unprefixed and word starts marked
// with U+2581,
// mean pooling taken from the sentence-transformers pooling config.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GGML_F32, GGML_Q8_0, ggufChunks, toQ8_0, type GgufMetadata, type GgufTensor } from './gguf-writer.js';

interface SafeTensor {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

// llama.cpp token types
const NORMAL = 1;
const CONTROL = 3;
// llama.cpp pooling types
const POOLING = { mean: 1, cls: 2 } as const;

/** The GGUF file's chunks for the model in `dir` (the sentence-transformers folder). */
export async function* bertToGguf(dir: string, name: string): AsyncGenerator<Uint8Array> {
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  if (config.model_type !== 'bert') throw new Error(`expected a BERT model, config says ${config.model_type}`);
  const pooling = JSON.parse(await readFile(join(dir, '1_Pooling', 'config.json'), 'utf8'));
  const special = new Set<string>(
    Object.values(JSON.parse(await readFile(join(dir, 'special_tokens_map.json'), 'utf8'))),
  );
  const vocab = (await readFile(join(dir, 'vocab.txt'), 'utf8')).split('\n');
  if (vocab.at(-1) === '') vocab.pop();
  const idOf = (t: string): number => {
    const id = vocab.indexOf(t);
    if (id < 0) throw new Error(`vocab.txt has no ${t}`);
    return id;
  };

  const metadata: Record<string, GgufMetadata> = {
    'general.architecture': { type: 'string', value: 'bert' },
    'general.name': { type: 'string', value: name },
    'general.file_type': { type: 'uint32', value: 7 }, // mostly Q8_0
    'bert.context_length': { type: 'uint32', value: config.max_position_embeddings },
    'bert.embedding_length': { type: 'uint32', value: config.hidden_size },
    'bert.feed_forward_length': { type: 'uint32', value: config.intermediate_size },
    'bert.block_count': { type: 'uint32', value: config.num_hidden_layers },
    'bert.attention.head_count': { type: 'uint32', value: config.num_attention_heads },
    'bert.attention.layer_norm_epsilon': { type: 'float32', value: config.layer_norm_eps },
    'bert.attention.causal': { type: 'bool', value: false },
    'bert.pooling_type': { type: 'uint32', value: pooling.pooling_mode_cls_token ? POOLING.cls : POOLING.mean },
    'tokenizer.ggml.model': { type: 'string', value: 'bert' },
    'tokenizer.ggml.token_type_count': { type: 'uint32', value: config.type_vocab_size },
    'tokenizer.ggml.tokens': {
      type: 'array',
      items: 'string',
      value: vocab.map((t) => (special.has(t) ? t : t.startsWith('##') ? t.slice(2) : `\u2581${t}`)),
    },
    'tokenizer.ggml.token_type': {
      type: 'array',
      items: 'int32',
      value: vocab.map((t) => (special.has(t) ? CONTROL : NORMAL)),
    },
    'tokenizer.ggml.unknown_token_id': { type: 'uint32', value: idOf('[UNK]') },
    'tokenizer.ggml.seperator_token_id': { type: 'uint32', value: idOf('[SEP]') },
    'tokenizer.ggml.padding_token_id': { type: 'uint32', value: idOf('[PAD]') },
    'tokenizer.ggml.cls_token_id': { type: 'uint32', value: idOf('[CLS]') },
    'tokenizer.ggml.mask_token_id': { type: 'uint32', value: idOf('[MASK]') },
    'tokenizer.ggml.add_bos_token': { type: 'bool', value: true },
    'tokenizer.ggml.add_sep_token': { type: 'bool', value: true },
  };

  const file = await readFile(join(dir, 'model.safetensors'));
  const headerLength = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, SafeTensor>;
  const body = file.subarray(8 + headerLength);
  const tensors: GgufTensor[] = [];
  for (const [hfName, t] of Object.entries(header)) {
    if (hfName === '__metadata__') continue;
    const ggufName = tensorName(hfName);
    if (ggufName === null) continue;
    if (t.dtype !== 'F32') throw new Error(`${hfName}: expected F32, got ${t.dtype}`);
    const [from, to] = t.data_offsets;
    const values = new Float32Array(body.buffer.slice(body.byteOffset + from, body.byteOffset + to));
    // Position and token-type embeddings are added to activations, which ggml does in F32 only.
    const matrix = t.shape.length === 2 && ggufName !== 'position_embd.weight' && ggufName !== 'token_types.weight';
    tensors.push({
      name: ggufName,
      dims: [...t.shape].reverse(),
      type: matrix ? GGML_Q8_0 : GGML_F32,
      data: matrix ? toQ8_0(values) : new Uint8Array(values.buffer),
    });
  }
  tensors.sort((a, b) => a.name.localeCompare(b.name));
  yield* ggufChunks(metadata, tensors);
}

const LAYER_PARTS: Record<string, string> = {
  'attention.self.query': 'attn_q',
  'attention.self.key': 'attn_k',
  'attention.self.value': 'attn_v',
  'attention.output.dense': 'attn_output',
  'attention.output.LayerNorm': 'attn_output_norm',
  'intermediate.dense': 'ffn_up',
  'output.dense': 'ffn_down',
  'output.LayerNorm': 'layer_output_norm',
};

const EMBEDDINGS: Record<string, string> = {
  'embeddings.word_embeddings.weight': 'token_embd.weight',
  'embeddings.token_type_embeddings.weight': 'token_types.weight',
  'embeddings.position_embeddings.weight': 'position_embd.weight',
  'embeddings.LayerNorm.weight': 'token_embd_norm.weight',
  'embeddings.LayerNorm.bias': 'token_embd_norm.bias',
};

/** llama.cpp's name for a Hugging Face BERT tensor; null for tensors the encoder does not use. */
function tensorName(hf: string): string | null {
  const name = hf.replace(/^bert\./, '');
  if (name in EMBEDDINGS) return EMBEDDINGS[name]!;
  const m = /^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$/.exec(name);
  if (m) {
    const part = LAYER_PARTS[m[2]!];
    if (part) return `blk.${m[1]}.${part}.${m[3]}`;
  }
  if (name === 'embeddings.position_ids' || name.startsWith('pooler.')) return null;
  throw new Error(`unexpected tensor ${hf}`);
}
