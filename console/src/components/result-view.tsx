/** A task's result in the page: images shown, video and audio playable, text as text. */
import type { TaskResult } from '../types';

export function ResultView(props: { result: TaskResult; index: number }) {
  const { result, index } = props;
  if (result.url === null) {
    if (result.text !== null) return <pre class="result-text">{result.text}</pre>;
    return <p class="muted">{result.kind} delivered inline or expired: read it with the family's query route</p>;
  }
  const name = `${result.kind} ${index + 1}`;
  switch (result.kind) {
    case 'image':
      return (
        <a class="result" href={result.url} target="_blank" rel="noreferrer">
          <img src={result.url} alt={name} loading="lazy" data-testid="result-image" />
        </a>
      );
    case 'video':
      return <video class="result" src={result.url} controls preload="metadata" aria-label={name} data-testid="result-video" />;
    case 'audio':
      return <audio class="result" src={result.url} controls preload="metadata" aria-label={name} data-testid="result-audio" />;
    default:
      return (
        <a class="result" href={result.url} target="_blank" rel="noreferrer">
          {name}
        </a>
      );
  }
}
