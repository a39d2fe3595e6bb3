// POST /v1/audio/transcribe?diarize=true end to end: whisper's own word times feed the
// diarization. A three-voice espeak-ng conversation: the speaker count is right, >= 90%
// of transcribed words carry their true speaker (after best label matching; a word's truth is
// the voice speaking at its middle), SPEAKER_00 speaks first and every segment and word is labelled.
import t from 'tap';
import { audioServer, post } from './helpers.js';
import { wavOf } from './speech.js';
import { ensureSpeechTools, matchedAccuracy, scripted, type Conversation } from '../helpers/speech-conversation.js';

ensureSpeechTools();
const server = await audioServer();
t.teardown(() => server.close());

interface Word {
  word: string;
  start: number;
  end: number;
  speaker: string;
}
interface Segment {
  start: number;
  end: number;
  text: string;
  words: Word[];
  speaker: string;
}

/** The true voice at time `at`: the scripted word nearest to it. */
function voiceAt(c: Conversation, at: number): number {
  let best = c.words[0];
  let distance = Infinity;
  for (const w of c.words) {
    const d = at < w.start ? w.start - at : at > w.end ? at - w.end : 0;
    if (d < distance) [best, distance] = [w, d];
  }
  return best.speaker;
}

// One conversation (whisper takes 15-80 s for it on 2 shared cores); test/audio/diarize.test.ts
// covers two- and three-voice files with exact word times.
for (const [voices, pattern, seed] of [[['en-us+m3', 'en+f2', 'en+m7'], [0, 1, 2, 1, 0, 2, 0, 1, 2], 22]] as [
  string[],
  number[],
  number,
][]) {
  t.test(`${voices.length} voices: ${voices.join(' / ')}`, async (t) => {
    const c = scripted(voices, pattern, { seed });
    const res = await post(server.url, wavOf(c.pcm, 16000), 'audio/wav', '?diarize=true');
    t.equal(res.status, 200);
    const segments = res.json.segments as Segment[];
    const words = segments.flatMap((s) => s.words);
    t.ok(words.length > 0.8 * c.words.length, `${words.length} words transcribed of ${c.words.length} spoken`);
    t.ok(
      segments.every((s) => /^SPEAKER_\d\d$/.test(s.speaker)) && words.every((w) => /^SPEAKER_\d\d$/.test(w.speaker)),
      'every segment and word has a SPEAKER_nn label',
    );
    t.equal(words[0].speaker, 'SPEAKER_00', 'the first voice heard is SPEAKER_00');
    const predicted = words.map((w) => Number(w.speaker.slice('SPEAKER_'.length)));
    t.equal(new Set(predicted).size, voices.length, `${voices.length} speakers found`);
    const accuracy = matchedAccuracy(
      words.map((w) => voiceAt(c, (w.start + w.end) / 2)),
      predicted,
    );
    t.ok(accuracy >= 0.9, `${(100 * accuracy).toFixed(1)}% of words on the right speaker (>= 90%)`);
    for (const s of segments) {
      const counts = new Map<string, number>();
      for (const w of s.words) counts.set(w.speaker, (counts.get(w.speaker) ?? 0) + 1);
      const most = Math.max(...counts.values());
      if ((counts.get(s.speaker) ?? 0) !== most)
        t.fail(`segment "${s.text}" is labelled ${s.speaker}, not who says most of it`);
    }
  });
}
