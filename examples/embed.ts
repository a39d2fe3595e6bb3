// Embedding the engine in your own Node app, without the HTTP server.
// In your app: import { open } from 'decision-machine-1';
import { open } from '../src/index.js';

const dm = await open({ slots: 1 }); // embedded defaults; DM_* environment variables apply too
try {
  const verdict = await dm.yesNo({
    text: 'Your order #4521 has shipped and should arrive within 3-5 business days.',
    statements: ['The order has been sent.', 'The order has already been delivered.'],
  });
  console.log(JSON.stringify(verdict, null, 2));
} finally {
  await dm.close();
}
