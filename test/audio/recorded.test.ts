// Word error rate on real recorded speech (LibriVox readings, spoken card names, a 1961 speech)
// against the transcripts their packages ship, with the default whisper model.
import t from 'tap';
import { audioServer, post } from './helpers.js';
import { recordedSpeech } from './recorded.js';
import { ensureAudioTools, wordErrors } from './speech.js';

t.setTimeout(1_800_000);
ensureAudioTools();
const recordings = recordedSpeech();
const server = await audioServer();
t.teardown(() => server.close());

t.test('real speech: word error rate under 15% over all recordings', async (t) => {
  let errors = 0;
  let words = 0;
  for (const r of recordings) {
    const res = await post(server.url, r.audio, r.contentType);
    t.equal(res.status, 200, `${r.name}: 200`);
    const e = wordErrors(r.reference, res.json.text);
    errors += e.errors;
    words += e.words;
    t.comment(`${r.name}: "${res.json.text}" (${e.errors}/${e.words})`);
  }
  t.comment(`real speech WER ${(errors / words).toFixed(3)} over ${words} words in ${recordings.length} recordings`);
  t.ok(words >= 90, `${words} reference words`);
  t.ok(errors / words < 0.15, `WER ${(errors / words).toFixed(3)}`);
});
