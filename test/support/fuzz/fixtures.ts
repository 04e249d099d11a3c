/**
 * The world a generated-input run needs on the assembled gateway: a funded account (its
 * tasks give real ids, an asset URL and a completed video), an account with balance 0 (every
 * charge it would cause is refused), the administrator, and one body per route that the route
 * accepts — checked here, so the near-valid bodies really are one mutation from valid.
 */
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../gateway.js';
import type { Json } from './json.js';
import { TINY_PNG } from './multipart.js';
import type { Credentials } from './request.js';

export interface FuzzWorld {
  gw: TestGateway;
  creds: Credentials;
  brokeAccountId: string;
  /** Valid bodies by route (`POST /v1/videos`). */
  templates: Record<string, Json>;
  /** Real values by path parameter name. */
  pools: Record<string, string[]>;
  /** Templates the gateway did not accept with the right credentials (should be none). */
  staleTemplates: string[];
}

const PNG_URI = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
const FRAME = 'https://media.example.com/frame.png';
const LAST = 'https://media.example.com/last.png';
const MOTION_TEXT = '/vendor/api/v1/services/aigc/video-generation/video-synthesis';
const MOTION_IMAGE = '/vendor/api/v1/services/aigc/image2video/video-synthesis';

type As = 'rich' | 'admin' | 'session' | 'none';

/** Ids a submit answered with, whatever its family's envelope. */
function idsIn(body: unknown, out: Set<string>): void {
  if (Array.isArray(body)) body.forEach((v) => idsIn(v, out));
  else if (body && typeof body === 'object') {
    for (const [k, v] of Object.entries(body)) {
      if (['id', 'task_id', 'taskId', 'result'].includes(k) && typeof v === 'string' && v) out.add(v);
      else idsIn(v, out);
    }
  }
}

/** `env` adds to (or overrides) the gateway's settings, e.g. its login limits. */
export async function startFuzzWorld(env: Record<string, string> = {}): Promise<FuzzWorld> {
  const gw = await startGateway({ SIM_STEP_MS: '0', POLL_INTERVAL_MS: '20', ...env });
  const admin = await adminClient(gw);
  const rich = await newUser(admin, { credit: 5_000_000_000 });
  const richKey = (await newToken(rich.client)).key;
  const broke = await newUser(admin);
  const brokeKey = (await newToken(broke.client)).key;
  const spare = await newToken(broke.client, { name: 'spare' });
  const channel = await admin.post('/api/channel/', { name: 'fuzz', family: 'images', base_url: '/_sim', models: ['fuzz-model'] });
  if (channel.status !== 200) throw new Error(`channel: ${channel.status} ${JSON.stringify(channel.body)}`);
  const channelId: string = channel.body.data.id;

  const plan: Array<[string, Json, As]> = [
    ['POST /api/user/login', { username: broke.username, password: broke.password }, 'none'],
    ['POST /api/user/', { username: 'fuzzuser1', password: 'fuzz-password-1' }, 'admin'],
    ['POST /api/token/', { name: 'fuzz', unlimited_quota: true }, 'session'],
    ['PUT /api/token/', { id: spare.id, name: 'renamed' }, 'session'],
    ['POST /api/channel/', { name: 'fuzz2', family: 'images', base_url: '/_sim', models: ['fuzz-model'] }, 'admin'],
    ['PUT /api/channel/', { id: channelId, weight: 2 }, 'admin'],
    ['PUT /api/pricing', { models: { 'fuzz-model': { unit: 'image', price: 5 } } }, 'admin'],
    ['POST /api/admin/credits', { user_id: rich.userId, amount: 1, note: 'fuzz' }, 'admin'],
    ['POST /v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'a fox', n: 1, size: '832x1216' }, 'rich'],
    ['POST /v1/video/generations', { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'a kite' }, 'rich'],
    ['POST /tune/submit/LYRICS', { prompt: 'rain', lyrics_model: 'remi' }, 'rich'],
    ['POST /tune/submit/MUSIC', { prompt: '[Verse]\nHello moon', title: 'Moon song', tags: 'folk', mv: 'tune-v4' }, 'rich'],
    ['POST /art/submit/imagine', { prompt: 'a castle' }, 'rich'],
    ['POST /art/submit/describe', { base64: PNG_URI }, 'rich'],
    ['POST /art/submit/blend', { base64Array: [PNG_URI, PNG_URI] }, 'rich'],
    ['POST /v1/videos', { model: 'Vid-H3', seconds: 4, prompt: 'a fox in snow', metadata: { ratio: '16:9' } }, 'rich'],
    ['POST /v1/chat/completions', { model: 'std-image', messages: [{ role: 'user', content: 'a red kite' }], size: '512x256' }, 'rich'],
    ['POST /v1/images/generations', { model: 'vendor-picgen-4-0-250828', prompt: 'p' }, 'rich'],
    ['POST /v1/images/edits', { model: 'vendor-picgen-4-0-250828', prompt: 'p', image: PNG_URI }, 'rich'],
    ['POST /clip/v1/videos/text2video', { model_name: 'clip-v1', prompt: 'a kite over a beach' }, 'rich'],
    ['POST /clip/v1/videos/image2video', { model_name: 'clip-v1', image: FRAME, image_tail: FRAME }, 'rich'],
    [`POST ${MOTION_TEXT}`, { model: 'motion2.6-t2v', prompt: 'waves on a shore', duration: 4 }, 'rich'],
    [`POST ${MOTION_IMAGE}`, { model: 'motion2.2-kf2v-flash', images: [FRAME, LAST], resolution: '480p' }, 'rich'],
  ];
  const clients: Record<As, Client> = { rich: new Client(gw.url, richKey), admin, session: broke.client, none: new Client(gw.url) };
  const templates: Record<string, Json> = {};
  const staleTemplates: string[] = [];
  const ids = new Set<string>();
  const answers: Record<string, unknown> = {};
  for (const [route, body, as] of plan) {
    const [method, path] = route.split(' ') as [string, string];
    const reply = await clients[as].request(method, path, body);
    if (reply.status >= 300) staleTemplates.push(`${route}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
    templates[route] = body;
    answers[route] = reply.body;
    if (as === 'rich') idsIn(reply.body, ids);
  }
  const imagine = (answers['POST /art/submit/imagine'] as { result?: string } | undefined)?.result ?? 'none';
  templates['POST /art/submit/change'] = { taskId: imagine, action: 'UPSCALE', index: 1 };

  // A completed Vid-H3 video (its content takes Range) and a signed asset URL.
  const video = (answers['POST /v1/videos'] as { id?: string } | undefined)?.id;
  if (video) {
    await eventually(async () => ((await clients.rich.get(`/v1/videos/${video}`)).body?.status === 'completed' ? true : undefined), 20_000);
  }
  const assetUrl = (answers['POST /v1/images/generations'] as { data?: Array<{ url?: string }> } | undefined)?.data?.[0]?.url ?? '';
  const tail = assetUrl.split('/assets/')[1] ?? 'none';
  const [key = '', query = ''] = tail.split('?');
  const assets = [tail, tail, `${tail.slice(0, -1)}A`, `${key}?${query.replace(/exp=\d+/, 'exp=1')}`, key, `x${tail}`, `${key}?exp=99999999999999999999&sig=x`];

  const pools = {
    task_id: [...ids, 'task_does_not_exist'],
    id: [imagine, spare.id, channelId, ...ids],
    '*': assets,
  };
  return {
    gw,
    creds: { brokeKey, richKey, brokeCookie: broke.client.cookie ?? '', adminCookie: admin.cookie ?? '' },
    brokeAccountId: broke.accountId,
    templates,
    pools,
    staleTemplates,
  };
}

/** Routes that take multipart forms, and their file field. */
export const FORM_ROUTES: Record<string, string> = {
  'POST /v1/images/edits': 'image',
  'POST /v1/videos': 'input_reference',
};
