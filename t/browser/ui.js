// ui.js SCENARIO URL OUTDIR - one browser scenario against a running
// hw-serve (and the replay model behind it), in the system Chromium
// driven by playwright-core; nothing is mocked.  Prints "ok SCENARIO" and
// exits 0, or prints what failed and exits 1.  Screenshots of the views
// go to OUTDIR; a downloaded audit export to OUTDIR/audit.jsonl.
"use strict";

const { chromium } = require("playwright-core");
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const [scenario, url, outdir] = process.argv.slice(2);
const chromePath = process.env.HW_CHROMIUM || "/usr/bin/chromium";

function check(cond, what) {
  if (!cond) throw new Error("failed: " + what);
}

async function noOverflow(page, width) {
  await page.setViewportSize({ width, height: 800 });
  await page.waitForTimeout(50);
  const o = await page.evaluate(() => ({
    sw: document.scrollingElement.scrollWidth, w: window.innerWidth }));
  check(o.sw <= o.w, `no horizontal overflow at ${width}px (${o.sw} > ${o.w})`);
}

async function ask(page, text) {
  await page.fill("#prompt", text);
  await page.press("#prompt", "Enter");
}

async function reviewCard(page) {
  const card = page.locator("#review");
  await card.waitFor({ state: "visible", timeout: 20000 });
  await page.waitForFunction(() =>
    document.activeElement === document.getElementById("review"));
  const title = await card.locator("h2").textContent();
  check(title === "One Decision for This Action Set", "the card's title");
  return card;
}

async function agentSaid(page, text) {
  await page.locator(".msg.agent", { hasText: text }).first()
    .waitFor({ timeout: 20000 });
}

// the ChatGPT sign-in scenarios: the stand-in's code and address, and
// where the tokens go, from the environment the bats test sets
const sub = { code: process.env.HW_TEST_USER_CODE,
  url: process.env.HW_TEST_VERIFICATION_URL,
  tokens: process.env.HW_TEST_TOKEN_FILE };

async function accountSays(page, text) {
  await page.locator("#account-status", { hasText: new RegExp("^" + text +
    "$") }).waitFor({ timeout: 20000 });
}

// no token (the stand-in's are at-MARKER-..., rt-MARKER-...) in the
// page, nor in any answer it was given
const token = /[ar]t-MARKER/;
async function noToken(page, answers) {
  check(!token.test(await page.content()), "no token in the page");
  const bad = answers.filter((a) => token.test(a));
  check(!bad.length, "no token in an answer to the page: " +
    bad.map((a) => a.slice(0, 200)).join("; "));
}

function watchAnswers(page) {
  const answers = [];
  page.on("response", async (r) => {
    try { answers.push(r.url() + " " + await r.text()); }
    catch (e) { /* a redirect */ }
  });
  return answers;
}

async function openSignIn(page) {
  await page.goto(url);
  await accountSays(page, "Not signed in");
  check(await page.isHidden("#sign-out"), "no Sign out while signed out");
  await page.click("#sign-in");
  await page.locator("#signin").waitFor({ state: "visible" });
  check(await page.isDisabled("#signin-go"),
    "no code before the terms are accepted");
}

// cancelled(page, action): action closes the sign-in panel; the page's
// DELETE of the device route must then stop the sign-in at the gateway
async function cancelled(page, action) {
  const del = page.waitForResponse((r) => r.request().method() === "DELETE" &&
    r.url().endsWith("/settings/models/subscription/device"));
  await action();
  await page.locator("#signin").waitFor({ state: "hidden" });
  const r = await del;
  const d = await r.json();
  check(r.status() === 200 && d.cancelled === true &&
    /^[0-9a-f]{32}$/.test(d.login_id), "the gateway cancelled the sign-in: " +
    r.status() + " " + JSON.stringify(d));
}

async function axeOn(page) {
  const src = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  // the page's CSP allows no inline script: axe goes in by evaluation
  await page.evaluate(src);
  const r = await page.evaluate(() => window.axe.run(document));
  const bad = r.violations.filter((v) =>
    v.impact === "serious" || v.impact === "critical");
  check(bad.length === 0, "no serious axe violations: " +
    bad.map((v) => v.id + " " + v.nodes.map((n) => n.target).join(" "))
      .join(", "));
}

const scenarios = {
  // ask, review, allow, tool output, reply, Files, Changes, audit export
  async task(page) {
    await page.goto(url);
    await page.locator(".empty").waitFor();
    await ask(page, "write notes");
    const card = await reviewCard(page);
    check(await card.locator("li").count() === 1, "one member");
    check((await card.locator("li").first().textContent())
      .includes("file_editor"), "the member's tool");
    await card.locator("summary").click();
    const args = JSON.parse(await card.locator("pre").textContent());
    check(args.path === "notes.md", "the exact arguments");
    check(await page.isDisabled("#send"), "the composer waits for the decision");
    await page.screenshot({ path: path.join(outdir, "review.png"),
      fullPage: true });
    await page.click("#allow");
    await agentSaid(page, "Done, notes written.");
    // untrusted Markdown: rendered, but no script, no javascript: link
    const md = page.locator(".msg.agent .md").last();
    check((await md.innerHTML()).includes("<em>notes</em>"),
      "Markdown emphasis");
    check(await md.locator("script").count() === 0, "no script survives");
    check((await md.textContent()).includes("<script>"),
      "raw HTML is shown as text");
    const hrefs = await md.locator("a").evaluateAll((as) =>
      as.map((a) => a.getAttribute("href")));
    check(hrefs.every((h) => /^(https?:|#)/.test(h)), "no javascript: link");
    check(await page.locator(".msg.agent h3").count() >= 1,
      "headings are demoted");
    await page.waitForFunction(() => document.activeElement ===
      document.getElementById("prompt"));
    await page.screenshot({ path: path.join(outdir, "conversation.png"),
      fullPage: true });
    await page.click("#tab-files");
    await page.locator("#tree button", { hasText: "notes.md" }).click();
    await page.locator("#file-view .CodeMirror").waitFor();
    check((await page.locator("#file-view .CodeMirror").textContent())
      .includes("notes"), "the file in CodeMirror");
    await page.screenshot({ path: path.join(outdir, "files.png"),
      fullPage: true });
    await page.click("#tab-changes");
    await page.locator("#changes button", { hasText: "notes.md" }).click();
    await page.locator("#diff-view .CodeMirror").nth(1).waitFor();
    await page.screenshot({ path: path.join(outdir, "changes.png"),
      fullPage: true });
    const [dl] = await Promise.all([page.waitForEvent("download"),
      page.click("#export-audit")]);
    check(dl.suggestedFilename() === "session-main-audit.jsonl",
      "the export's name");
    await dl.saveAs(path.join(outdir, "audit.jsonl"));
  },

  async reject(page) {
    await page.goto(url);
    await ask(page, "write notes");
    await reviewCard(page);
    await page.click("#reject");
    await page.locator("#review").waitFor({ state: "hidden" });
    await page.locator(".msg.action", { hasText: "rejected" })
      .waitFor({ timeout: 20000 });
  },

  // the session continued in the terminal (hw ask) while the page is open
  async terminal(page) {
    await page.goto(url);
    await page.locator(".empty").waitFor();
    await page.waitForFunction(() =>
      document.getElementById("connection").textContent === "Live");
    execFileSync("hw", ["ask", "what is here"], { stdio: "ignore" });
    await agentSaid(page, "Nothing to do here.");
    const roles = await page.locator("#conversation .msg")
      .evaluateAll((ms) => ms.map((m) => m.className));
    check(roles[0].includes("user") && roles[1].includes("agent"),
      "the new events in order");
  },

  // the WebSocket is blocked: the page falls back to server-sent events
  async fallback(page) {
    await page.addInitScript(() => {
      window.WebSocket = function () {
        document.documentElement.dataset.wsTried = "yes";
        throw new Error("blocked");
      };
    });
    await page.goto(url);
    await page.locator("#connection", { hasText: /^Live$/ }).waitFor();
    check(await page.getAttribute("html", "data-ws-tried") === "yes",
      "the WebSocket was tried first");
    await ask(page, "write notes");
    await reviewCard(page);
    await page.click("#allow");
    await agentSaid(page, "Done, notes written.");
  },

  // 320, 390 and 768 px; the review done with the keyboard alone
  async narrow(page) {
    await page.emulateMedia({ reducedMotion: "reduce" });
    await page.goto(url);
    for (const w of [768, 390, 320]) await noOverflow(page, w);
    await page.focus("#prompt");
    await page.keyboard.type("write notes");
    await page.keyboard.press("Enter");
    await reviewCard(page);
    await noOverflow(page, 320);
    await page.screenshot({ path: path.join(outdir, "review-320.png"),
      fullPage: true });
    // Tab from the card: the arguments, Reject, then Allow
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement.id) === "allow")
        break;
    }
    check(await page.evaluate(() => document.activeElement.id) === "allow",
      "Allow reached by keyboard");
    await page.keyboard.press("Enter");
    await agentSaid(page, "Done, notes written.");
    await noOverflow(page, 390);
  },

  async axe(page) {
    await page.goto(url);
    await page.locator(".empty").waitFor();
    await ask(page, "write notes");
    await reviewCard(page);
    const src = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
    // the page's CSP allows no inline script: axe goes in by evaluation
    await page.evaluate(src);
    const r = await page.evaluate(() => window.axe.run(document));
    const bad = r.violations.filter((v) =>
      v.impact === "serious" || v.impact === "critical");
    check(bad.length === 0, "no serious axe violations: " +
      bad.map((v) => v.id).join(", "));
  },

  // sign in with ChatGPT (the stand-in grants after two pending polls),
  // then sign out: the code and address shown are the stand-in's
  async signin(page) {
    const answers = watchAnswers(page);
    await openSignIn(page);
    await page.screenshot({ path: path.join(outdir, "signin-terms.png") });
    await page.check("#signin-terms");
    await page.click("#signin-go");
    await page.locator("#signin-user-code", { hasText: sub.code }).waitFor();
    check(await page.textContent("#signin-user-code") === sub.code,
      "the stand-in's user code");
    const a = page.locator("#signin-url");
    check(await a.getAttribute("href") === sub.url, "the verification URL");
    check(await a.textContent() === sub.url, "the URL shown");
    check(await a.getAttribute("target") === "_blank" &&
      await a.getAttribute("rel") === "noopener noreferrer",
      "the link opens apart, without opener or referrer");
    check(await page.evaluate(() => document.activeElement.id) ===
      "signin-url", "the link has the focus");
    await page.screenshot({ path: path.join(outdir, "signin.png") });
    await noToken(page, answers);
    await accountSays(page, "Signed in with ChatGPT");
    await page.locator("#signin").waitFor({ state: "hidden" });
    check(await page.evaluate(() => document.activeElement.id) ===
      "sign-out", "Sign out has the focus");
    const st = fs.statSync(sub.tokens);
    check((st.mode & 0o777) === 0o600, "the token file is 0600");
    await noToken(page, answers);
    await page.click("#sign-out");
    await accountSays(page, "Not signed in");
    check(!fs.existsSync(sub.tokens), "the token file is gone");
    check(await page.isVisible("#sign-in"), "Sign in is offered again");
    await noToken(page, answers);
  },

  // a denied sign-in says so, and Try again starts over
  async signinDenied(page) {
    await openSignIn(page);
    await page.check("#signin-terms");
    await page.click("#signin-go");
    const err = page.locator("#signin-error");
    await err.waitFor({ state: "visible", timeout: 20000 });
    check(await err.textContent() === "The sign-in did not complete: the " +
      "sign-in was denied at the verification page", "the reason shown");
    check(await page.isHidden("#signin-code"), "no code after the denial");
    await page.screenshot({ path: path.join(outdir, "signin-denied.png") });
    await page.click("#signin-retry");
    check(await page.isVisible("#signin-terms") &&
      !(await page.isDisabled("#signin-go")), "Try again starts over");
    await page.click("#signin-cancel");
    await page.locator("#signin").waitFor({ state: "hidden" });
    await accountSays(page, "Not signed in");
  },

  // Cancel after Get a code: the gateway stops its child (the bats test
  // checks the process), no poll follows, and a new sign-in can start
  async signinCancel(page) {
    const polls = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/device/poll")) polls.push(Date.now());
    });
    await openSignIn(page);
    await page.check("#signin-terms");
    await page.click("#signin-go");
    await page.locator("#signin-user-code", { hasText: sub.code }).waitFor();
    await cancelled(page, () => page.click("#signin-cancel"));
    const n = polls.length;
    await page.waitForTimeout(2500);
    check(polls.length === n, "no poll after Cancel");
    await accountSays(page, "Not signed in");
    check(await page.locator("#conversation [role=alert]").count() === 0,
      "no notice after the cancel");
  },

  // a token file the status refuses: the rail says why, as text
  async signinUnreadable(page) {
    await page.goto(url);
    const why = "The sign-in cannot be read: refusing '" + sub.tokens +
      "': others may read or write it (mode 0640; want 0600)";
    await page.locator("#account-status", { hasText: "cannot be read" })
      .waitFor();
    check(await page.textContent("#account-status") === why,
      "the refusal, as hw-model says it");
    check(await page.locator("#account-status *").count() === 0,
      "the gateway's text is not markup");
    check(await page.isVisible("#sign-in") &&
      await page.isHidden("#sign-out"), "Sign in is offered");
  },

  // by keyboard at 320 px; axe on the open panel in both themes; Escape
  // cancels and no poll follows
  async signinNarrow(page) {
    const polls = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/device/poll")) polls.push(Date.now());
    });
    await page.setViewportSize({ width: 320, height: 800 });
    await page.goto(url);
    await accountSays(page, "Not signed in");
    await page.focus("#sign-in");
    await page.keyboard.press("Enter");
    await page.locator("#signin").waitFor({ state: "visible" });
    check(await page.evaluate(() => document.activeElement.id) ===
      "signin-terms", "the terms have the focus");
    await noOverflow(page, 320);
    await axeOn(page);
    await page.keyboard.press("Space");
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement.id) === "signin-go")
        break;
    }
    check(await page.evaluate(() => document.activeElement.id) ===
      "signin-go", "Get a code reached by keyboard");
    await page.keyboard.press("Enter");
    await page.locator("#signin-user-code", { hasText: sub.code }).waitFor();
    await noOverflow(page, 320);
    await axeOn(page);
    await page.screenshot({ path: path.join(outdir, "signin-320.png"),
      fullPage: true });
    for (const scheme of ["dark", "light"]) {
      await page.emulateMedia({ colorScheme: scheme });
      await axeOn(page);
    }
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: path.join(outdir, "signin-dark.png") });
    await cancelled(page, () => page.keyboard.press("Escape"));
    const n = polls.length;
    await page.waitForTimeout(2500);
    check(polls.length === n, "no poll after Escape");
    await accountSays(page, "Not signed in");
  },

  // the system theme, and an explicit choice that is remembered
  async theme(page) {
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(url);
    const bg = () => page.evaluate(() =>
      getComputedStyle(document.body).backgroundColor);
    check(await bg() === "rgb(22, 21, 18)", "the system's dark theme");
    await page.click("#theme");
    check(await bg() === "rgb(251, 250, 247)", "light once chosen");
    await page.reload();
    check(await bg() === "rgb(251, 250, 247)", "the choice is remembered");
    await page.screenshot({ path: path.join(outdir, "light.png") });
  },
};

(async () => {
  const browser = await chromium.launch({ executablePath: chromePath,
    args: ["--no-sandbox"] });
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  let rc = 0;
  try {
    await scenarios[scenario](page);
    check(errors.length === 0, "no page errors: " + errors.join("; "));
    console.log("ok " + scenario);
  } catch (e) {
    console.log(e.message);
    rc = 1;
  }
  await browser.close();
  process.exit(rc);
})();
