// GET /docs lists the documents installed with the package (README and docs/*.md);
// GET /docs/:name serves one as text/markdown. Read once at start-up.
import { readdirSync, readFileSync } from 'node:fs';
import type { Route } from './types.js';

const ROOT = new URL('../../../', import.meta.url); // the package root, from dist/src/http/

export function docsRoutes(): Route[] {
  const documents = new Map<string, string>([['readme', readFileSync(new URL('README.md', ROOT), 'utf8')]]);
  for (const file of readdirSync(new URL('docs/', ROOT))
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    documents.set(file.slice(0, -3), readFileSync(new URL(`docs/${file}`, ROOT), 'utf8'));
  }
  const index = { documents: [...documents.keys()].map((name) => ({ name, href: `/docs/${name}` })) };
  return [
    { method: 'get', path: '/docs', handler: async () => ({ status: 200, body: index }) },
    {
      method: 'get',
      path: '/docs/:name',
      handler: async (req) => {
        const text = documents.get(req.path.slice('/docs/'.length));
        if (text === undefined) return { status: 404, body: 'Not Found', contentType: 'text/plain' };
        return { status: 200, body: text, contentType: 'text/markdown; charset=utf-8' };
      },
    },
  ];
}
