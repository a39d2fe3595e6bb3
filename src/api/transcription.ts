// POST /v1/audio/transcribe's body, beside the capability schemas: src/audio builds it and
// /openapi.json documents it from this one object. `speaker` appears only with diarize=true.
import { Type, type Static } from '@sinclair/typebox';

export const Word = Type.Object({
  word: Type.String(),
  start: Type.Number({ description: 'seconds' }),
  end: Type.Number({ description: 'seconds' }),
  speaker: Type.Optional(Type.String()),
});

export const Segment = Type.Object({
  start: Type.Number({ description: 'seconds' }),
  end: Type.Number({ description: 'seconds' }),
  text: Type.String(),
  words: Type.Array(Word),
  speaker: Type.Optional(Type.String({ description: 'who says most of its words' })),
});

export const TranscriptionResponse = Type.Object(
  {
    text: Type.String({ description: 'segment texts joined with spaces' }),
    segments: Type.Array(Segment),
    duration: Type.Number({ description: 'seconds' }),
    language: Type.Null(),
  },
  { $id: 'TranscriptionResponse' },
);

export type Word = Static<typeof Word>;
export type Segment = Static<typeof Segment>;
export type TranscriptionResponse = Static<typeof TranscriptionResponse>;
