// chat_page_test.mjs: the chat page at / in headless Chromium (puppeteer-core): it shows the
// model, streams an answer to a typed message, stops it with the stop button (which frees
// the server's slot), renders markup in messages as text, and starts a new chat.
// Usage: node chat_page_test.mjs http://127.0.0.1:PORT   ($CHROMIUM: the browser, default /usr/bin/chromium)
import assert from "node:assert/strict";
import fs from "node:fs";
import puppeteer from "puppeteer-core";

const base = process.argv[2];
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(executablePath)) {
  console.log(`SKIP: no Chromium at ${executablePath} (scripts/setup.sh installs Debian's chromium)`);
  process.exit(77);
}
async function metric(name) {
  const text = await (await fetch(base + "/metrics")).text();
  return Number(text.match(new RegExp(`^${name} (\\S+)$`, "m"))[1]);
}

const browser = await puppeteer.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--window-size=1280,800", "--no-proxy-server"] });
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Greedy, so the answer is the same every run, and without end tokens, so it runs until stopped.
  await page.evaluateOnNewDocument(() =>
    localStorage.setItem("tg-chat-params", JSON.stringify({ temperature: 0, ignore_eos: true })));
  await page.goto(base + "/", { waitUntil: "networkidle0" });
  await page.waitForFunction(() => document.getElementById("model").textContent === "synthetic", { timeout: 20_000 });

  // No max_tokens: the answer runs until stopped, or until it fills the context. The server runs
  // with 32768 tokens of context for this test (meson.build: TG_SERVE_CONTEXT), which the tiny
  // model takes minutes to fill; at 4096 it took a few seconds, and on a loaded 2-core machine
  // the click once landed after that. A stream that still ran to its end is tried again (a stop
  // must work at least once).
  for (let attempt = 1; ; ++attempt) {
    await page.type("#input", "Say hi");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => {
      const box = document.querySelector(".msg.assistant");
      return box && box.querySelector(".text").textContent.length > 5;
    }, { timeout: 30_000 });
    const state = await page.$eval(".msg.assistant", (b) => `${b.dataset.state}: ${b.textContent.slice(0, 200)}`);
    assert.equal(await page.$eval("#stop", (b) => b.disabled), false, `stop is enabled while streaming (${state})`);
    const before = await page.$eval(".msg.assistant .text", (e) => e.textContent.length);
    await new Promise((r) => setTimeout(r, 300));
    const later = await page.$eval(".msg.assistant .text", (e) => e.textContent.length);
    assert.ok(later > before, "the text grows as tokens stream in");
    await page.click("#stop");
    await page.waitForFunction(() => document.querySelector(".msg.assistant").dataset.state !== "streaming", { timeout: 60_000 });
    const ended = await page.$eval(".msg.assistant", (b) => b.dataset.state);
    if (ended === "stopped") break;
    assert.equal(ended, "done", "the answer ended by the stop button or at the context's end");
    assert.ok(attempt < 3, `the answer ran to the context's end before the stop took effect, ${attempt} times`);
    await page.click("#new");
  }
  assert.equal(await page.$eval("#stop", (b) => b.disabled), true);
  assert.match(await page.$eval(".msg.assistant .stats", (e) => e.textContent), /tokens\/s/);
  // The server noticed the closed stream and freed the slot.
  for (let i = 0; i < 100 && (await metric("tg_requests_processing")) !== 0; ++i) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await metric("tg_requests_processing"), 0);
  assert.ok((await metric("tg_requests_cancelled_total")) >= 1);

  // Markup in a message is text, never HTML.
  await page.type("#input", "<img src=x onerror=\"window.pwned=1\"><b>bold</b>");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll(".msg.user").length === 2, { timeout: 10_000 });
  await page.click("#stop");
  assert.equal(await page.$$eval(".msg img, .msg b", (n) => n.length), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.match(await page.$eval(".msg.user:last-of-type .text, .msg.user ~ .msg.user .text", (e) => e.textContent), /<img/);

  await page.screenshot({ path: new URL("chat_page.png", import.meta.url).pathname });  // for a look by hand
  await page.click("#new");
  assert.equal(await page.$$eval(".msg", (n) => n.length), 0);
  assert.deepEqual(errors, []);
  console.log("ok: the chat page streamed, stopped and started anew");
} finally {
  await browser.close();
}
