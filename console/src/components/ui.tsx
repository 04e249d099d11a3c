/** Small pieces every page uses: a section card, an error line, a status badge, a confirm button. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from '../api';

export function Card(props: { title: string; actions?: ComponentChildren; children: ComponentChildren; testId?: string }) {
  return (
    <section class="card" data-testid={props.testId}>
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions && <div class="card-actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

export function ErrorLine(props: { error: string | undefined }) {
  return props.error ? (
    <p class="error" role="alert">
      {props.error}
    </p>
  ) : null;
}

const TONES: Readonly<Record<string, string>> = {
  completed: 'good',
  delivered: 'good',
  enabled: 'good',
  healthy: 'good',
  ok: 'good',
  ready: 'good',
  live: 'good',
  failed: 'bad',
  dead: 'bad',
  disabled: 'muted',
  unhealthy: 'bad',
  down: 'bad',
  open: 'bad',
  unavailable: 'bad',
  offline: 'bad',
  in_progress: 'busy',
  queued: 'busy',
  pending: 'busy',
  degraded: 'busy',
  half_open: 'busy',
  connecting: 'busy',
  reconnecting: 'busy',
};

export type Tone = 'good' | 'bad' | 'busy' | 'muted';

/** A word on a coloured background; the colour follows the word unless a tone is given. */
export function Badge(props: { value: string; tone?: Tone; title?: string; testId?: string }) {
  return (
    <span class={`badge ${props.tone ?? TONES[props.value.toLowerCase()] ?? 'muted'}`} title={props.title} data-testid={props.testId}>
      {props.value.replace(/_/g, ' ')}
    </span>
  );
}

/**
 * A button that runs an action (asking first when `confirm` says what it does), shows that it is
 * busy, and reports a failure beside it.
 */
export function ActionButton(props: { label: string; action: () => Promise<unknown>; confirm?: string; kind?: 'danger' | 'primary'; testId?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async () => {
    if (props.confirm && !window.confirm(props.confirm)) return;
    setBusy(true);
    setError(undefined);
    try {
      await props.action();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" class={props.kind ?? ''} disabled={busy} onClick={() => void run()} data-testid={props.testId}>
        {props.label}
      </button>
      {error && <span class="error inline">{error}</span>}
    </span>
  );
}

/** A form's submit state: run the action, show busy and the error. */
export function useSubmit(action: () => Promise<void>): { busy: boolean; error: string | undefined; onSubmit: (event: Event) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  return {
    busy,
    error,
    onSubmit(event: Event) {
      event.preventDefault();
      setBusy(true);
      setError(undefined);
      action().then(
        () => setBusy(false),
        (err: unknown) => {
          setError(messageOf(err));
          setBusy(false);
        },
      );
    },
  };
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** Page buttons under a list, shown when it has more than one page (`labels`: what the two directions mean). */
export function Pager(props: { page: number; pages: number; setPage: (page: number) => void; labels?: [string, string] }) {
  const { page, pages, setPage } = props;
  const [back, forward] = props.labels ?? ['Previous', 'Next'];
  if (pages <= 1) return null;
  return (
    <div class="pager">
      <button disabled={page === 0} onClick={() => setPage(page - 1)}>
        {back}
      </button>
      <span>
        page {page + 1} of {pages}
      </span>
      <button disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
        {forward}
      </button>
    </div>
  );
}
