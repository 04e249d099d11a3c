/**
 * `messages` of `POST /v1/chat/completions` for std-image / pro-image (spec 4.5), planned over
 * the list the schema parsed (schema.ts checks each message, its role and its parts): the prompt
 * is the text of the last user message (a string, or the `text` parts of its content array);
 * `image_url` parts in user messages (an http/https URL or a Base64 image data URI, given as
 * `{url}` or as the string itself) make the call image-to-image. What counts across messages is
 * refused here, naming the list. Messages are forwarded in the OpenAI form, with only known keys.
 */
import { MAX_PROMPT_CHARS, refuse } from '../kit/fields.js';
import { given } from '../kit/schema.js';
import type { ChatMessageIn } from './schema.js';

export const MAX_MESSAGES = 64;
/** Reference images in one conversation (as on the async pro-image route). */
export const MAX_IMAGE_PARTS = 16;
/** Text of one message (a string or one text part) is a prompt: at most MAX_PROMPT_CHARS. */
export const MAX_MESSAGE_TEXT_CHARS = MAX_PROMPT_CHARS;
/** Text of the whole conversation, which is recorded with the task. */
export const MAX_CONVERSATION_CHARS = 4 * MAX_PROMPT_CHARS;
export const ROLES = ['system', 'developer', 'user', 'assistant'] as const;
export const DETAILS = ['auto', 'low', 'high'] as const;

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };
export type ChatMessage = { role: (typeof ROLES)[number]; content: string | Part[] };

export interface PlannedMessages {
  messages: ChatMessage[];
  prompt: string;
  /** Reference images with the field path that holds each. */
  images: Array<{ param: string; url: string }>;
}

type PartIn = Exclude<ChatMessageIn['content'], string>[number];

/** A part in the OpenAI form: known keys only, `image_url` as `{url, detail?}`. */
function partOf(part: PartIn): Part {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const image = typeof part.image_url === 'string' ? { url: part.image_url } : part.image_url;
  return { type: 'image_url', image_url: { url: image.url, ...(given(image.detail) ? { detail: image.detail } : {}) } };
}

function messageOf(message: ChatMessageIn): ChatMessage {
  const content = typeof message.content === 'string' ? message.content : message.content.map(partOf);
  return { role: message.role, content };
}

function textOf(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

/** The conversation's text, its prompt and its images, or the first rule across messages it breaks. */
export function planMessages(parsed: readonly ChatMessageIn[]): PlannedMessages {
  const messages = parsed.map(messageOf);
  const total = messages.reduce((sum, m) => sum + textOf(m).length, 0);
  if (total > MAX_CONVERSATION_CHARS) refuse('messages', `the text of all messages must be at most ${MAX_CONVERSATION_CHARS} characters, got ${total}`);
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const user = messages[lastUser];
  if (!user) refuse('messages', 'needs a user message carrying the prompt');
  const prompt = textOf(user);
  if (prompt.trim() === '') refuse(`messages.${lastUser}.content`, 'the user message must carry the prompt text');
  const images = messages.flatMap((m, i) =>
    typeof m.content === 'string'
      ? []
      : m.content.flatMap((p, j) => (p.type === 'image_url' ? [{ param: `messages.${i}.content.${j}.image_url.url`, url: p.image_url.url }] : [])),
  );
  if (images.length > MAX_IMAGE_PARTS) refuse('messages', `at most ${MAX_IMAGE_PARTS} image_url parts, got ${images.length}`);
  return { messages, prompt, images };
}
