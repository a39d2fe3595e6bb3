// Just enough of PyTorch's checkpoint format to read a state_dict's tensors without Python or
// torch: a small pickle reader and the description of each tensor it yields. The CAM++ converter
// (campplus.ts) reads its checkpoint with it.

/** A tensor as a checkpoint describes it: a view of one storage. */
export interface TensorRef {
  storage: string; // storage key
  storageType: string; // e.g. FloatStorage
  offset: number; // elements
  size: number[];
  stride: number[];
}

/** The float32 tensor `name` of a state_dict, checked to have `shape` and to be contiguous. */
export function tensorRef(state: Map<unknown, unknown>, name: string, shape: number[]): TensorRef {
  const ref = state.get(name) as TensorRef | undefined;
  if (!ref || !Array.isArray(ref.size)) throw new Error(`checkpoint lacks tensor ${name}`);
  if (ref.storageType !== 'FloatStorage') throw new Error(`${name} is ${ref.storageType}, expected FloatStorage`);
  if (ref.size.join('x') !== shape.join('x'))
    throw new Error(`${name} has shape ${ref.size.join('x')}, expected ${shape.join('x')}`);
  const contiguous = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  if (ref.stride.join(',') !== contiguous.join(',')) throw new Error(`${name} is not contiguous`);
  return ref;
}

/** A mark on the pickle stack. */
const MARK = Symbol('mark');

/**
 * Just enough of Python's pickle (protocol 2, the opcodes torch's legacy and zip formats use) to
 * read a checkpoint's structure. Dicts become Maps; torch's tensor rebuild becomes a TensorRef;
 * any other class or call becomes an inert description.
 */
export class PickleReader {
  offset = 0;
  constructor(private readonly buf: Buffer) {}

  /** Reads one pickle from the current offset. */
  load(): unknown {
    const stack: unknown[] = [];
    const memo = new Map<number, unknown>();
    const popMark = (): unknown[] => {
      const i = stack.lastIndexOf(MARK);
      if (i < 0) throw new Error('pickle: mark missing');
      const items = stack.splice(i);
      return items.slice(1);
    };
    const b = this.buf;
    for (;;) {
      if (this.offset >= b.length) throw new Error('pickle: unexpected end of data');
      const op = b[this.offset++];
      switch (op) {
        case 0x80:
          this.offset++;
          break; // PROTO
        case 0x2e:
          return stack.pop(); // STOP
        case 0x28:
          stack.push(MARK);
          break;
        case 0x4e:
          stack.push(null);
          break; // NONE
        case 0x88:
          stack.push(true);
          break;
        case 0x89:
          stack.push(false);
          break;
        case 0x4b:
          stack.push(b[this.offset]);
          this.offset += 1;
          break; // BININT1
        case 0x4d:
          stack.push(b.readUInt16LE(this.offset));
          this.offset += 2;
          break; // BININT2
        case 0x4a:
          stack.push(b.readInt32LE(this.offset));
          this.offset += 4;
          break; // BININT
        case 0x8a: {
          // LONG1
          const n = b[this.offset++];
          let v = 0n;
          for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[this.offset + i]);
          if (n > 0 && b[this.offset + n - 1] & 0x80) v -= 1n << BigInt(8 * n);
          this.offset += n;
          stack.push(v);
          break;
        }
        case 0x47:
          stack.push(b.readDoubleBE(this.offset));
          this.offset += 8;
          break; // BINFLOAT
        case 0x58: {
          // BINUNICODE
          const n = b.readUInt32LE(this.offset);
          stack.push(b.toString('utf8', this.offset + 4, this.offset + 4 + n));
          this.offset += 4 + n;
          break;
        }
        case 0x7d:
          stack.push(new Map());
          break; // EMPTY_DICT
        case 0x5d:
          stack.push([]);
          break; // EMPTY_LIST
        case 0x29:
          stack.push([]);
          break; // EMPTY_TUPLE
        case 0x85:
          stack.push(stack.splice(-1));
          break; // TUPLE1
        case 0x86:
          stack.push(stack.splice(-2));
          break; // TUPLE2
        case 0x87:
          stack.push(stack.splice(-3));
          break; // TUPLE3
        case 0x74:
          stack.push(popMark());
          break; // TUPLE
        case 0x61:
          (stack[stack.length - 2] as unknown[]).push(stack.pop());
          break; // APPEND
        case 0x65: {
          // APPENDS
          const items = popMark();
          (stack[stack.length - 1] as unknown[]).push(...items);
          break;
        }
        case 0x73: {
          // SETITEM
          const value = stack.pop();
          const key = stack.pop();
          (stack[stack.length - 1] as Map<unknown, unknown>).set(key, value);
          break;
        }
        case 0x75: {
          // SETITEMS
          const items = popMark();
          const dict = stack[stack.length - 1] as Map<unknown, unknown>;
          for (let i = 0; i < items.length; i += 2) dict.set(items[i], items[i + 1]);
          break;
        }
        case 0x71:
          memo.set(b[this.offset++], stack[stack.length - 1]);
          break; // BINPUT
        case 0x72:
          memo.set(b.readUInt32LE(this.offset), stack[stack.length - 1]);
          this.offset += 4;
          break;
        case 0x68:
          stack.push(memo.get(b[this.offset++]));
          break; // BINGET
        case 0x6a:
          stack.push(memo.get(b.readUInt32LE(this.offset)));
          this.offset += 4;
          break;
        case 0x63: {
          // GLOBAL "module\nname\n"
          const end1 = b.indexOf(0x0a, this.offset);
          const end2 = b.indexOf(0x0a, end1 + 1);
          stack.push({ global: `${b.toString('latin1', this.offset, end1)}.${b.toString('latin1', end1 + 1, end2)}` });
          this.offset = end2 + 1;
          break;
        }
        case 0x51: {
          // BINPERSID: ('storage', type, key, location, size, view)
          const pid = stack.pop() as unknown[];
          stack.push({ storageType: (pid[1] as { global: string }).global.split('.').pop(), storage: pid[2] });
          break;
        }
        case 0x52: {
          // REDUCE
          const args = stack.pop() as unknown[];
          const fn = (stack.pop() as { global?: string }).global;
          stack.push(reduce(fn, args));
          break;
        }
        case 0x62:
          stack.pop();
          break; // BUILD: object state (e.g. an OrderedDict's) is not needed
        default:
          throw new Error(`pickle: unsupported opcode 0x${op.toString(16)} at byte ${this.offset - 1}`);
      }
    }
  }
}

function reduce(fn: string | undefined, args: unknown[]): unknown {
  if (fn === 'collections.OrderedDict') return new Map();
  if (fn === 'torch._utils._rebuild_tensor_v2') {
    const [storage, offset, size, stride] = args as [
      { storage: string; storageType: string },
      number,
      number[],
      number[],
    ];
    const ref: TensorRef = { ...storage, offset, size, stride };
    return ref;
  }
  return { call: fn, args };
}
