// openai_client_test.mjs: the official `openai` npm client against `llm --serve`: models,
// chat and completions streamed and not, an error as the client's BadRequestError, a stream
// the client breaks off, and 8 concurrent streams (one breaking off) whose greedy texts equal
// their solo runs. Usage: node openai_client_test.mjs http://127.0.0.1:PORT
import assert from "node:assert/strict";
import OpenAI from "openai";

// maxRetries 0: a 5xx must fail the test, not be retried away.
const client = new OpenAI({ baseURL: process.argv[2] + "/v1", apiKey: "none", maxRetries: 0, timeout: 120_000 });

const models = await client.models.list();
const model = models.data[0].id;
assert.equal(models.data[0].object, "model");

const messages = [{ role: "user", content: "Say hi" }];
const whole = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0 });
assert.equal(whole.object, "chat.completion");
assert.match(whole.id, /^chatcmpl-/);
assert.equal(whole.choices[0].message.role, "assistant");
assert.ok(["stop", "length"].includes(whole.choices[0].finish_reason));
assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);

async function streamedChat(body, breakAfter = Infinity) {
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let text = "", role = null, finish = null, usage = null, chunks = 0;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (c && role === null) role = c.delta.role;
    if (c?.delta?.content) text += c.delta.content;
    if (c?.finish_reason) finish = c.finish_reason;
    if (chunk.usage) usage = chunk.usage;
    if (++chunks >= breakAfter) break;  // the client aborts the request
  }
  return { text, role, finish, usage, chunks };
}

const streamed = await streamedChat({ model, messages, max_tokens: 12, temperature: 0 });
assert.equal(streamed.role, "assistant");
assert.equal(streamed.text, whole.choices[0].message.content);
assert.equal(streamed.finish, whole.choices[0].finish_reason);
assert.equal(streamed.usage.completion_tokens, whole.usage.completion_tokens);

const completion = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 10, temperature: 0 });
assert.equal(completion.object, "text_completion");
const completionStream = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 10, temperature: 0, stream: true });
let completionText = "";
for await (const chunk of completionStream) completionText += chunk.choices[0]?.text ?? "";
assert.equal(completionText, completion.choices[0].text);

await assert.rejects(client.chat.completions.create({ model, messages, n: 2 }), (e) => {
  assert.ok(e instanceof OpenAI.BadRequestError, `expected BadRequestError, got ${e?.constructor?.name}`);
  assert.equal(e.status, 400);
  assert.equal(e.param, "n");
  return true;
});

// Breaking off a long stream frees the server: the next request is answered at once.
const broken = await streamedChat({ model, messages, max_tokens: 4000, temperature: 0 }, 3);
assert.equal(broken.chunks, 3);
const t0 = Date.now();
await client.chat.completions.create({ model, messages, max_tokens: 2, temperature: 0 });
assert.ok(Date.now() - t0 < 5000, "the request after a broken-off stream waited for it");

// 8 concurrent streams with different prompts; number 3 breaks off after 2 chunks.
const prompts = Array.from({ length: 8 }, (_, i) => [{ role: "user", content: `Story number ${i}: once` }]);
const solo = [];
for (const p of prompts) solo.push((await client.chat.completions.create({ model, messages: p, max_tokens: 24, temperature: 0 })).choices[0].message.content);
const together = await Promise.all(prompts.map((p, i) =>
  streamedChat({ model, messages: p, max_tokens: 24, temperature: 0 }, i === 3 ? 2 : Infinity)));
together.forEach((r, i) => {
  if (i !== 3) assert.equal(r.text, solo[i], `stream ${i} differs from its solo run`);
});
console.log(`ok: ${model}, "${whole.choices[0].message.content}", 8 concurrent streams match their solo runs`);
