/**
 * Submitting a task from the page, with one of the user's API keys, through the same public
 * routes any client calls: an async image, a Vid-H3 video or a song. The answer's task id is
 * handed back so the list can open it and follow it live.
 */
import { useState } from 'preact/hooks';
import { withKey } from '../api';
import { ErrorLine, useSubmit } from './ui';

type Kind = 'image' | 'video' | 'music';

interface KindSpec {
  label: string;
  path: string;
  body: (fields: Fields) => Record<string, unknown>;
  taskIdOf: (answer: Record<string, unknown>) => string;
}

interface Fields {
  model: string;
  prompt: string;
  n: number;
  seconds: number;
  callbackUrl: string;
}

const KINDS: Readonly<Record<Kind, KindSpec>> = {
  image: {
    label: 'Image (async)',
    path: '/v1/images/async/generations',
    body: (f) => ({ model: f.model, prompt: f.prompt, n: f.n }),
    taskIdOf: (a) => String(a.id),
  },
  video: {
    label: 'Video (Vid-H3)',
    path: '/v1/videos',
    body: (f) => ({ model: 'Vid-H3', prompt: f.prompt, seconds: f.seconds, ...(f.callbackUrl ? { metadata: { callback_url: f.callbackUrl } } : {}) }),
    taskIdOf: (a) => String(a.id),
  },
  music: {
    label: 'Music (tune)',
    path: '/tune/submit/MUSIC',
    body: (f) => ({ ai_description_prompt: f.prompt, ...(f.callbackUrl ? { callback_url: f.callbackUrl } : {}) }),
    taskIdOf: (a) => String(a.data),
  },
};

/** Models of the async image route that take a prompt alone (edit-only models need references). */
export const isAsyncImageModel = (model: string): boolean =>
  (/^(anime-|vis-imagine-|pro-image$)/.test(model) || /picgen-4-0-/.test(model)) && !model.endsWith('-edit');

export function SubmitTask(props: { apiKey: string | undefined; imageModels: string[]; onSubmitted: (taskId: string) => void }) {
  const [key, setKey] = useState(props.apiKey ?? '');
  const [kind, setKind] = useState<Kind>('image');
  const [model, setModel] = useState('');
  const [prompt, setPrompt] = useState('a red fox in fresh snow');
  const [n, setN] = useState(1);
  const [seconds, setSeconds] = useState(4);
  const [callbackUrl, setCallbackUrl] = useState('');
  const [submitted, setSubmitted] = useState<string | undefined>(undefined);
  const imageModel = model || props.imageModels.find((m) => m.startsWith('anime-')) || props.imageModels[0] || 'anime-diffusion-4-5-full';
  const form = useSubmit(async () => {
    const spec = KINDS[kind];
    setSubmitted(undefined);
    const answer = await withKey<Record<string, unknown>>(
      key.trim(),
      'POST',
      spec.path,
      spec.body({ model: imageModel, prompt, n, seconds, callbackUrl: callbackUrl.trim() }),
    );
    const taskId = spec.taskIdOf(answer);
    setSubmitted(taskId);
    props.onSubmitted(taskId);
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit} data-testid="submit-task-form">
      <label class="wide">
        API key
        <input
          type="password"
          autocomplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          placeholder="sk-… (create one under API keys)"
          data-testid="submit-key"
        />
      </label>
      <label>
        Kind
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)} data-testid="submit-kind">
          {(Object.keys(KINDS) as Kind[]).map((k) => (
            <option key={k} value={k}>
              {KINDS[k].label}
            </option>
          ))}
        </select>
      </label>
      {kind === 'image' && (
        <>
          <label>
            Model
            <select value={imageModel} onChange={(e) => setModel(e.currentTarget.value)} data-testid="submit-model">
              {(props.imageModels.length ? props.imageModels : [imageModel]).map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label class="narrow">
            Images
            <input type="number" min={1} max={4} value={n} onInput={(e) => setN(Number(e.currentTarget.value))} />
          </label>
        </>
      )}
      {kind === 'video' && (
        <label class="narrow">
          Seconds
          <input type="number" min={4} max={15} value={seconds} onInput={(e) => setSeconds(Number(e.currentTarget.value))} />
        </label>
      )}
      <label class="wide">
        Prompt
        <input required value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} data-testid="submit-prompt" />
      </label>
      {kind !== 'image' && (
        <label class="wide">
          Callback URL (optional)
          <input type="url" value={callbackUrl} onInput={(e) => setCallbackUrl(e.currentTarget.value)} placeholder="https://example.com/hook" />
        </label>
      )}
      <button type="submit" class="primary" disabled={form.busy || key.trim() === ''} data-testid="submit-task">
        Submit
      </button>
      <ErrorLine error={form.error} />
      {submitted && (
        <p class="ok" data-testid="submitted-task">
          Submitted <code>{submitted}</code>
        </p>
      )}
    </form>
  );
}
