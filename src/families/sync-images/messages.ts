/**
 * `messages` of `POST /v1/chat/completions` for std-image / pro-image (spec 4.5): the prompt is
 * the text of the last user message (a string, or the `text` parts of its content array);
 * `image_url` parts in user messages (an http/https URL or a Base64 image data URI, given as
 * `{url}` or as the string itself) make the call image-to-image. Messages are forwarded in the
 * OpenAI form, with only known keys.
 */
import { type Body, checkLength, field, isHttpUrl, isImageDataUri, isPlainObject, MAX_PROMPT_CHARS, refuse } from '../kit/fields.js';

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

export interface ReadMessages {
  messages: ChatMessage[];
  prompt: string;
  /** Reference images with the field path that holds each. */
  images: Array<{ param: string; url: string }>;
}

function readImagePart(part: Body, where: string): Part {
  const value = field(part, 'image_url');
  const image = typeof value === 'string' ? { url: value } : value;
  if (!isPlainObject(image)) refuse(`${where}.image_url`, 'must be {"url": "<http/https URL or data:image/...;base64,...>"}');
  const url = field(image, 'url');
  if (typeof url !== 'string' || !(isHttpUrl(url) || isImageDataUri(url))) {
    refuse(`${where}.image_url.url`, 'must be an http/https URL or a data:image/<lowercase format>;base64,<data> URI');
  }
  const detail = field(image, 'detail');
  if (detail !== undefined && !(typeof detail === 'string' && (DETAILS as readonly string[]).includes(detail)))
    refuse(`${where}.image_url.detail`, `must be one of ${DETAILS.join(', ')}`);
  return { type: 'image_url', image_url: { url, ...(typeof detail === 'string' ? { detail } : {}) } };
}

function readPart(part: unknown, where: string, role: string): Part {
  if (!isPlainObject(part)) refuse(where, 'must be an object with a type');
  const type = field(part, 'type');
  if (type === 'text') {
    const text = field(part, 'text');
    if (typeof text !== 'string') refuse(`${where}.text`, 'must be a string');
    checkLength(text, `${where}.text`, MAX_MESSAGE_TEXT_CHARS);
    return { type: 'text', text };
  }
  if (type === 'image_url') {
    if (role !== 'user') refuse(where, 'image_url parts are taken only in user messages');
    return readImagePart(part, where);
  }
  return refuse(`${where}.type`, 'must be text or image_url');
}

function readMessage(message: unknown, index: number): ChatMessage {
  const where = `messages.${index}`;
  if (!isPlainObject(message)) refuse(where, 'must be an object with role and content');
  const role = field(message, 'role');
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) refuse(`${where}.role`, `must be one of ${ROLES.join(', ')}`);
  const content = field(message, 'content');
  if (typeof content === 'string') {
    checkLength(content, `${where}.content`, MAX_MESSAGE_TEXT_CHARS);
    return { role: role as ChatMessage['role'], content };
  }
  if (!Array.isArray(content) || content.length === 0) refuse(`${where}.content`, 'must be a string or a non-empty array of text and image_url parts');
  return { role: role as ChatMessage['role'], content: content.map((part: unknown, i) => readPart(part, `${where}.content.${i}`, role)) };
}

function textOf(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

export function readMessages(body: Body): ReadMessages {
  const value = field(body, 'messages');
  if (value === undefined) refuse('messages', 'required: an array whose user message carries the prompt');
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_MESSAGES) refuse('messages', `must be an array of 1 to ${MAX_MESSAGES} messages`);
  const messages = value.map((m: unknown, i) => readMessage(m, i));
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
