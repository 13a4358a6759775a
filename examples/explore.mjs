// Every connection of a Linkerd pod, as classes (docs/explore.md, "Library").
// Run after `npm run build`: node examples/explore.mjs
import { readFileSync } from 'node:fs';
const saveText = readFileSync(new URL('linkerd-default.rules', import.meta.url), 'utf8');
import { explore, classOf, renderExplore } from 'netfilter-sim';
const r = explore({ rules: saveText, listen: [4140, 4143, 8080], from: 'local', family: 4 });
classOf(r, { uid: 1000, gid: 1000, dst: '10.96.0.10:80' })?.outcome; // 'local'
process.stdout.write(renderExplore(r));
