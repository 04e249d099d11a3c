/**
 * The declared contract of synchronous std-image / pro-image (spec 4.5, 4.6, 2.2): the bodies
 * of `POST /v1/chat/completions` and of their models on `POST /v1/images/generations`, each field
 * declared once, refused in the words clients have always read, and the JSON answers. What counts
 * across the messages (the conversation's text, the user message carrying the prompt, the image
 * parts) is the plan's (rules.ts, messages.ts). A streamed answer (`stream: true`) is
 * `text/event-stream` written past the serialiser; the routes describe it.
 */
import { z } from 'zod';
import { isHttpUrl, isImageDataUri, isPlainObject } from '../kit/fields.js';
import { proImageOptions } from '../kit/pro-image-rules.js';
import { absent, bool, boundedString, byKind, jsonBody, limitedString, notTaken, oneOf, prompt, urlOrDataUriPattern } from '../kit/schema.js';
import { DETAILS, MAX_CONVERSATION_CHARS, MAX_IMAGE_PARTS, MAX_MESSAGE_TEXT_CHARS, MAX_MESSAGES, ROLES } from './messages.js';

export const SYNC_IMAGE_MODELS = ['std-image', 'pro-image'] as const;
export type SyncImageModel = (typeof SYNC_IMAGE_MODELS)[number];
export const STYLE_MAX = 256;
export const RESPONSE_FORMATS = ['url', 'b64_json'] as const;
/** Why `image` or `images` (even null) is refused on the images-style route. */
export const REFERENCES_NOT_TAKEN = 'not taken by /v1/images/generations; for image-to-image send an image_url part to /v1/chat/completions';
/** Why a model is refused: absent (or null), or not one of SYNC_IMAGE_MODELS. */
export const MODEL_REQUIRED = 'required: std-image or pro-image';
export const MODEL_UNKNOWN = 'must be std-image or pro-image';

const model = z
  .enum(SYNC_IMAGE_MODELS, { error: (issue) => (absent(issue.input) ? MODEL_REQUIRED : MODEL_UNKNOWN) })
  .meta({ description: 'std-image or pro-image (priced per image)' });

/** The options of 4.5, as the pro-image rules take them (in their order); `n` is charged on the images returned. */
const options = {
  ...proImageOptions,
  n: proImageOptions.n.meta({ description: 'images to make, default 1; reserved on n, charged on the images returned' }),
};

// ---- messages -----------------------------------------------------------------------------------

const IMAGE_URL_RULE = 'must be an http/https URL or a data:image/<lowercase format>;base64,<data> URI';
const CONTENT_RULE = 'must be a string or a non-empty array of text and image_url parts';
const MESSAGES_RULE = `must be an array of 1 to ${MAX_MESSAGES} messages`;
const isImageRef = (url: string) => isHttpUrl(url) || isImageDataUri(url);

const TextPart = z.looseObject({ type: z.literal('text'), text: limitedString(MAX_MESSAGE_TEXT_CHARS) });

/** `image_url`: `{url, detail?}`, or the URL itself (then refused as its `url`). */
const imageUrl = byKind(
  {
    string: z
      .string()
      .refine(isImageRef, { message: IMAGE_URL_RULE, path: ['url'] })
      .meta({ pattern: urlOrDataUriPattern() }),
    object: z.looseObject({
      url: z.string({ error: IMAGE_URL_RULE }).refine(isImageRef, IMAGE_URL_RULE).meta({ pattern: urlOrDataUriPattern() }),
      detail: oneOf(DETAILS),
    }),
  },
  'must be {"url": "<http/https URL or data:image/...;base64,...>"}',
).meta({ description: 'an http/https URL or a data:image/<lowercase format>;base64,<data> URI, as {url, detail?} or the string itself; user messages only' });

const ImageUrlPart = z.looseObject({ type: z.literal('image_url'), image_url: imageUrl });

/** An image part outside a user message: refused whole, before its image is looked at. */
const RefusedImagePart = z
  .looseObject({ type: z.literal('image_url') })
  .pipe(z.never({ error: 'image_url parts are taken only in user messages' }))
  .meta({ description: 'refused: image_url parts are taken only in user messages', not: {} });

const part = (image: typeof ImageUrlPart | typeof RefusedImagePart) =>
  z.discriminatedUnion('type', [TextPart, image], {
    error: (issue) => (isPlainObject(issue.input) ? 'must be text or image_url' : 'must be an object with a type'),
  });

/** A message's content: its text, or a non-empty list of parts (which parts, its role decides). */
const content = (image: typeof ImageUrlPart | typeof RefusedImagePart) =>
  byKind({ string: limitedString(MAX_MESSAGE_TEXT_CHARS), array: z.array(part(image)).min(1, CONTENT_RULE) }, CONTENT_RULE);

const Message = z.discriminatedUnion(
  'role',
  [
    z.looseObject({ role: z.enum(ROLES.filter((role) => role !== 'user')), content: content(RefusedImagePart) }),
    z.looseObject({ role: z.literal('user'), content: content(ImageUrlPart) }),
  ],
  { error: (issue) => (isPlainObject(issue.input) ? `must be one of ${ROLES.join(', ')}` : 'must be an object with role and content') },
);

const messages = z
  .array(Message, { error: (issue) => (absent(issue.input) ? 'required: an array whose user message carries the prompt' : MESSAGES_RULE) })
  .min(1, MESSAGES_RULE)
  .max(MAX_MESSAGES, MESSAGES_RULE)
  .meta({
    description: `the conversation: the prompt is the text of the last user message; image_url parts (at most ${MAX_IMAGE_PARTS}) make the call image-to-image; at most ${MAX_CONVERSATION_CHARS} characters of text in all`,
  });

// ---- bodies -------------------------------------------------------------------------------------

export const ChatBody = jsonBody({
  model,
  messages,
  stream: bool().meta({ description: 'true: text/event-stream chat.completion.chunk frames, then [DONE]' }),
  ...options,
});

export const ImagesBody = jsonBody({
  model,
  prompt,
  image: notTaken(REFERENCES_NOT_TAKEN),
  images: notTaken(REFERENCES_NOT_TAKEN),
  stream: bool().meta({ description: 'true: text/event-stream image_generation.partial_image and image_generation.completed events' }),
  style: boundedString({ minLength: 0, maxLength: STYLE_MAX }).meta({ description: 'forwarded, e.g. vivid or natural' }),
  response_format: oneOf(RESPONSE_FORMATS).meta({ description: 'default url for std-image, b64_json for pro-image' }),
  ...options,
});

export type ChatRequest = z.output<typeof ChatBody>;
export type ImagesRequest = z.output<typeof ImagesBody>;
/** The options both routes take, as parsed. */
export type ImageOptions = Pick<ChatRequest, keyof typeof options>;
export type ChatMessageIn = ChatRequest['messages'][number];

// ---- answers ------------------------------------------------------------------------------------

// Strict: on the shared generations path an answer must match its own family's schema only.
const count = () => z.int().nonnegative();

const ImagesUsage = z.strictObject({
  total_tokens: count(),
  input_tokens: count(),
  output_tokens: count(),
  input_tokens_details: z.strictObject({ text_tokens: count(), image_tokens: count() }),
});

const revisedPrompt = z.string().optional();

export const ImagesAnswer = z.strictObject({
  created: count().meta({ description: 'when the call completed, Unix seconds' }),
  data: z.array(
    z.union([
      z.strictObject({ url: z.string().meta({ description: 'a signed link to the re-hosted image' }), revised_prompt: revisedPrompt }),
      z.strictObject({ b64_json: z.string().meta({ description: 'the image, Base64' }), revised_prompt: revisedPrompt }),
    ]),
  ),
  usage: ImagesUsage,
});

export const ChatAnswer = z.strictObject({
  id: z.string().meta({ description: 'the task id (also the x-task-id header)' }),
  created: count(),
  model: z.string(),
  object: z.literal('chat.completion'),
  choices: z.array(
    z.strictObject({
      index: count(),
      message: z.strictObject({
        role: z.literal('assistant'),
        content: z.string().meta({ description: 'Markdown links to the images, one per paragraph: ![image 1](https://…)' }),
      }),
      finish_reason: z.literal('stop'),
    }),
  ),
  usage: z.strictObject({ prompt_tokens: count(), completion_tokens: count(), total_tokens: count() }),
});

export type ImagesAnswerBody = z.infer<typeof ImagesAnswer>;
export type ChatAnswerBody = z.infer<typeof ChatAnswer>;
