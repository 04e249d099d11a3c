/**
 * The media of a Vid-H3 request (spec 4.13), over fields the schema checked: frame images
 * (`input_reference`, `image`, `images`, `metadata.first_frame_image` / `last_frame_image`) and
 * the multimodal `metadata.content` (`{type:'text', text}` and `{type:'reference_image'|
 * 'reference_video'|'reference_audio', url}`). The first frame may come from any of its fields
 * but only once; frames and reference media never mix (spec 4.13). Reference counts are those of
 * limits 8; audio references may go with the text alone (the audio-only rule of 4.3 is vidgen's).
 */
import { checkReferenceCounts, oneOf, refuse } from '../kit/fields.js';
import type { ContentItem, VidH3Request } from './schema.js';

export interface Frames {
  first?: string;
  last?: string;
}

type Metadata = NonNullable<VidH3Request['metadata']>;

const or = (value: string | null | undefined) => value ?? undefined;

export function framesOf(body: VidH3Request, metadata: Metadata): Frames {
  const images = body.images ?? [];
  const reference = body.input_reference;
  const first = oneOf('image', 'first frame (input_reference, image, images[0], metadata.first_frame_image)', [
    typeof reference === 'string' ? reference : or(reference?.image_url),
    or(body.image),
    images[0],
    or(metadata.first_frame_image),
  ]);
  const last = oneOf('images', 'last frame (images[1], metadata.last_frame_image)', [images[1], or(metadata.last_frame_image)]);
  if (last !== undefined && first === undefined) refuse('metadata.last_frame_image', 'a last frame needs a first frame');
  return { ...(first !== undefined ? { first } : {}), ...(last !== undefined ? { last } : {}) };
}

/** The items of `metadata.content` as sent upstream (a form's holes skipped) and its text. */
export function contentOf(metadata: Metadata): { text?: string; media: ContentItem[] } {
  const items = (metadata.content ?? []).flatMap((item): ContentItem[] =>
    item.type === 'text' ? [{ type: 'text', text: item.text }] : [{ type: item.type, url: item.url }],
  );
  const texts = items.filter((i) => i.type === 'text');
  // The spec's request has one text (`prompt` or "a text item"); the text-only and frame modes send it as `prompt`.
  if (texts.length > 1) refuse('metadata.content', 'at most one text item');
  const media = items.filter((i) => i.type !== 'text');
  checkReferenceCounts('metadata.content', {
    images: media.filter((i) => i.type === 'reference_image').length,
    videos: media.filter((i) => i.type === 'reference_video').length,
    audio: media.filter((i) => i.type === 'reference_audio').length,
  });
  const text = texts[0];
  return { ...(text?.type === 'text' ? { text: text.text } : {}), media };
}
