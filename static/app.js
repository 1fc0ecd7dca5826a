// Quarry's only script. Kept in a file (not inline) because the
// Content-Security-Policy allows no inline scripts (nor hx-vals with js:).
// Everything here is an enhancement; the forms work without it.
//
// Keyboard marking on the result review:
//   j / k  move to the next / previous paper
//   r / i / u  mark the current paper relevant / irrelevant / unsure and
//          move on to the next paper
//   1 … 9  mark the current paper irrelevant for the review's first,
//          second … ninth exclusion reason, and move on
//   o / Enter  open or close the current paper's abstract
//   n  focus the current paper's note
// The current paper (the cursor, aria-current) follows the mouse and the
// focus: clicking or tabbing into a paper makes it current. Before any
// move, the keys act on the focused paper, else on the first.
//
// Address: a page that answers a form's POST shows its own address (see
// data-page-url below).
//
// Marks made elsewhere: a mark stored by another viewer of the run (or
// through the API, or with a decision) arrives on the run's event stream
// ("mark") and is set on the paper in place: its radios, note and reason.
// A note or reason the viewer is typing in (it has the focus) is never
// overwritten: the paper says who changed it, and to what, instead.
//
// Edited forms: once any form on the page is changed (typing, a mark, a
// form's own htmx button), the run page's status poll (and the stream's
// watcher, run-watch) says dirty=1 (until
// then dirty=0), so the server shows a banner instead of reloading the page
// when the run moves on. A page nobody has typed into just follows the run.
(function () {
	"use strict";
	var dirty = false;

	// A form answered in place (422 with its errors, 409) is drawn at its
	// POST-only action's address, which reloading or sharing would turn
	// into a 405. The page names its own address (data-page-url); the
	// address bar shows that instead. (Without JavaScript the action's
	// GET redirects to the run's page.)
	function showOwnAddress() {
		var self = document.querySelector("[data-page-url]");
		if (self && window.history && history.replaceState) {
			var want = self.getAttribute("data-page-url");
			if (want && location.pathname !== want) history.replaceState(history.state, "", want);
		}
	}
	showOwnAddress();

	// A boosted form (hx-boost) is answered with a whole page, which htmx
	// swaps in as the body: a page load without the browser's reload. Its
	// answer is drawn whatever its status (a 422 with the form's errors, a
	// 409), as the browser would; the body swapped in is a new page, so
	// nothing is typed in it yet and it shows its own address.
	document.addEventListener("htmx:beforeRequest", function (ev) {
		if (ev.detail.boosted) submitting = true;
	});
	document.addEventListener("htmx:beforeSwap", function (ev) {
		if (!ev.detail.boosted) return;
		ev.detail.shouldSwap = true;
		ev.detail.isError = false;
	});
	document.addEventListener("htmx:afterSettle", function (ev) {
		if (!ev.detail.boosted) return;
		submitting = false;
		dirty = false;
		showOwnAddress();
	});
	document.addEventListener("htmx:afterRequest", function (ev) {
		if (ev.detail.boosted && !ev.detail.successful && !ev.detail.xhr.status) submitting = false; // no answer
	});

	function inForm(el) {
		return !!(el && (el.form || (el.closest && el.closest("form"))));
	}

	// A page submitting a form (not through htmx) goes where the form's
	// answer leads. Its status requests must not send it elsewhere
	// meanwhile: the stream's ping for its own decision would answer with
	// a redirect that cancels the submit's navigation for a page drawn
	// "running", and the form the run reaches next would come a page load
	// later. If no answer comes, the page follows the run again.
	var submitting = false;
	document.addEventListener("submit", function (ev) {
		if (ev.defaultPrevented) return;
		submitting = true;
		setTimeout(function () { submitting = false; }, 10000);
	});
	window.addEventListener("pageshow", function () { submitting = false; });

	document.addEventListener("input", function (ev) { if (inForm(ev.target)) dirty = true; });
	document.addEventListener("change", function (ev) { if (inForm(ev.target)) dirty = true; });

	document.addEventListener("htmx:configRequest", function (ev) {
		var elt = ev.detail.elt;
		if (elt && (elt.id === "run-status" || elt.id === "run-watch")) {
			if (submitting) {
				ev.preventDefault();
				return;
			}
			// Always said, so the server can tell "untouched" from a page
			// whose script does not track edits (and keep its text safe).
			ev.detail.parameters["dirty"] = dirty ? "1" : "0";
		} else if (inForm(elt)) {
			// "Add query", "Keep editing", "Keep marking": the person is
			// working on the form even if no field changed yet.
			dirty = true;
		}
	});

	// sent remembers, per paper, the marks, notes and reasons this page
	// sent and has not yet seen come back, so the stream's echo of its own
	// save neither undoes a newer click (relevant then irrelevant quickly:
	// the first echo must not check relevant again) nor is taken for
	// someone else's change of a field the viewer went back to. An echo
	// is recognised once; a save the server found unchanged never comes
	// back, so what was sent is forgotten after a while.
	var sent = {};
	var echoWindow = 10000;
	document.addEventListener("htmx:configRequest", function (ev) {
		var elt = ev.detail.elt;
		var p = paperOf(elt);
		if (!p || elt.getAttribute("data-testid") !== "paper-marks") return;
		// As the server stores it: trimmed, a reason only on an
		// irrelevant paper.
		var checked = p.querySelector("input[data-mark]:checked");
		var mark = checked ? checked.getAttribute("data-mark") : "";
		var id = p.getAttribute("data-paper-id");
		var now = Date.now();
		sent[id] = (sent[id] || []).filter(function (s) { return now - s.at < echoWindow; });
		sent[id].push({
			mark: mark,
			note: fieldValue(p, "paper-note").trim(),
			reason: mark === "irrelevant" ? fieldValue(p, "paper-reason").trim() : "",
			at: now
		});
	});

	function fieldValue(p, testid) {
		var el = p.querySelector('[data-testid="' + testid + '"]');
		return el ? el.value : "";
	}

	// The run page's workflow drawing follows the run: the status line the
	// page polls (and the stream's status ping fetches at once) carries the
	// run's version, and when it moved the drawing is fetched anew
	// (graph.svg?v=version), so the highlighted stage moves without a
	// reload.
	function followGraph() {
		var st = document.getElementById("run-status");
		var img = document.querySelector('img[data-testid="run-graph"]');
		if (!st || !img) return;
		var v = st.getAttribute("data-version");
		if (!v || v === img.getAttribute("data-version")) return;
		img.setAttribute("data-version", v);
		img.setAttribute("src", img.getAttribute("src").replace(/\?.*$/, "") + "?v=" + encodeURIComponent(v));
		var cur = document.querySelector('[data-testid="run-current-stage"]');
		var step = st.getAttribute("data-step");
		if (cur && step) cur.textContent = step;
	}
	document.addEventListener("htmx:afterSettle", followGraph);

	// The stream's EventSource is made by htmx's sse extension; every one
	// it opens (it opens a new one to reconnect) is listened to once.
	document.addEventListener("htmx:sseOpen", function (ev) {
		var src = ev.detail && ev.detail.source;
		if (!src || src.quarryMarks) return;
		src.quarryMarks = true;
		src.addEventListener("mark", function (msg) {
			var m;
			try { m = JSON.parse(msg.data); } catch (e) { return; }
			showMark(m);
		});
	});

	function showMark(m) {
		var form = document.querySelector('[data-testid="review-form"]');
		if (!form || (form.getAttribute("action") || "").indexOf("/checkpoints/" + m.checkpoint_id + "/") < 0) return;
		var p = papers().filter(function (el) { return el.getAttribute("data-paper-id") === m.paper_id; })[0];
		if (!p) return;
		setDrawn(p, m);
		var mine = sent[m.paper_id] || [];
		for (var i = 0; i < mine.length; i++) {
			if (mine[i].mark === m.mark && mine[i].note === m.note && mine[i].reason === m.reason) {
				// This page's own save: the page already shows it, or newer.
				mine.splice(0, i + 1);
				return;
			}
		}
		var radio = p.querySelector('input[data-mark="' + m.mark + '"]');
		var changed = false;
		if (radio && !radio.checked) {
			// No change event: this page must not save it again.
			radio.checked = true;
			changed = true;
		}
		changed = setField(p, "paper-note", m.note, m.marked_by, "note") || changed;
		changed = setField(p, "paper-reason", m.reason, m.marked_by, "exclusion reason") || changed;
		var status = p.querySelector(".mark-status");
		if (changed && status) status.textContent = (m.marked_by || "Someone") + " marked this " + m.mark;
	}

	// setDrawn records a stored mark as the paper's baseline (its was:
	// fields): the whole-form submit sends only fields that differ from
	// what is stored, so a mark the viewer puts back to what it was before
	// a teammate's change is still sent.
	function setDrawn(p, m) {
		var set = function (prefix, value) {
			var el = p.querySelector('input[name="' + prefix + m.paper_id + '"]');
			if (el) el.value = value || "";
		};
		set("was:", m.mark || "unsure");
		set("was-note:", m.note);
		set("was-reason:", m.reason);
	}

	// setField sets a paper's note or reason to value unless the viewer is
	// typing in it; then it says who changed it, next to the field.
	function setField(p, testid, value, by, what) {
		var el = p.querySelector('[data-testid="' + testid + '"]');
		if (!el) return false;
		if (el.value === value) {
			clearNotice(el);
			return false;
		}
		if (document.activeElement !== el) {
			el.value = value;
			clearNotice(el);
			return true;
		}
		var notice = noticeOf(el);
		if (!notice) {
			notice = document.createElement("p");
			notice.className = "hint";
			notice.setAttribute("role", "status");
			notice.setAttribute("data-testid", "mark-changed");
			el.insertAdjacentElement("afterend", notice);
			// Once the viewer settles the field, the notice has served.
			el.addEventListener("change", function () { clearNotice(el); }, { once: true });
		}
		notice.textContent = (by || "Someone") + " changed this " + what + " to “" + value + "”";
		return false;
	}

	function noticeOf(el) {
		var n = el.nextElementSibling;
		return n && n.getAttribute("data-testid") === "mark-changed" ? n : null;
	}

	function clearNotice(el) {
		var n = noticeOf(el);
		if (n) n.remove();
	}

	function papers() {
		return Array.prototype.slice.call(document.querySelectorAll('[data-testid="paper"]'));
	}

	function paperOf(el) {
		return el && el.closest ? el.closest('[data-testid="paper"]') : null;
	}

	// setCursor makes paper i current; the cursor lives in the DOM
	// (aria-current), so a list htmx redraws starts afresh.
	function setCursor(list, i) {
		list.forEach(function (p, j) { p.setAttribute("aria-current", j === i ? "true" : "false"); });
	}

	// cursor is the current paper's index: the marked one, else the one
	// holding the focus, else -1.
	function cursor(list) {
		for (var i = 0; i < list.length; i++) {
			if (list[i].getAttribute("aria-current") === "true") return i;
		}
		return list.indexOf(paperOf(document.activeElement));
	}

	function focusPaper(i) {
		var list = papers();
		if (list.length === 0) return;
		i = Math.max(0, Math.min(list.length - 1, i));
		setCursor(list, i);
		// Scrolled by hand, so the paper's scroll margins keep it clear
		// of the review's sticky bar.
		list[i].focus({ preventScroll: true });
		list[i].scrollIntoView({ block: "nearest" });
	}

	// target is the paper the keys act on, made current: the cursor, or
	// the first paper before any move.
	function target() {
		var list = papers();
		var i = cursor(list);
		if (i < 0) {
			focusPaper(0);
			i = 0;
		} else {
			setCursor(list, i);
		}
		return list[i];
	}

	// Clicks and focus move the cursor, so j goes on from the paper the
	// person is looking at, not from where the keys last left it.
	function follow(ev) {
		var p = paperOf(ev.target);
		if (!p) return;
		var list = papers();
		var i = list.indexOf(p);
		if (i >= 0) setCursor(list, i);
	}
	document.addEventListener("focusin", follow);
	document.addEventListener("mousedown", follow);

	// advance moves the cursor from paper p to the next one (staying on
	// the last), as screening tools do after a mark.
	function advance(p) {
		var i = papers().indexOf(p);
		if (i >= 0) focusPaper(i + 1);
	}

	// mark marks the cursor's paper and moves on. Setting checked fires no
	// event, so the change is announced as a click would: the paper's
	// marks save themselves (htmx, on change).
	function mark(value) {
		var p = target();
		var radio = p && p.querySelector('input[data-mark="' + value + '"]');
		if (!radio) return;
		if (!radio.checked) {
			radio.checked = true;
			radio.dispatchEvent(new Event("change", { bubbles: true }));
		}
		advance(p);
	}

	// exclude marks the cursor's paper irrelevant for the n-th exclusion
	// reason the review offers (its datalist, in order) and moves on; one
	// change event saves the mark and the reason together.
	function exclude(n) {
		var opts = document.querySelectorAll("#exclusion-reasons option");
		if (n >= opts.length) return;
		var p = target();
		var radio = p && p.querySelector('input[data-mark="irrelevant"]');
		var reason = p && p.querySelector('[data-testid="paper-reason"]');
		if (!radio || !reason) return;
		var want = opts[n].value;
		if (!radio.checked || reason.value !== want) {
			radio.checked = true;
			reason.value = want;
			reason.dispatchEvent(new Event("change", { bubbles: true }));
		}
		advance(p);
	}

	function toggleAbstract() {
		var p = target();
		var d = p && p.querySelector("details");
		if (d) d.open = !d.open;
	}

	function focusNote() {
		var p = target();
		var note = p && p.querySelector('[data-testid="paper-note"]');
		if (note) note.focus();
	}

	document.addEventListener("keydown", function (ev) {
		if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
		var t = ev.target;
		if (t && (t.tagName === "INPUT" && t.type !== "radio" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
		if (papers().length === 0) return;
		switch (ev.key) {
		case "j": focusPaper(cursor(papers()) + 1); break;
		case "k": focusPaper(Math.max(0, cursor(papers()) - 1)); break;
		case "r": mark("relevant"); break;
		case "i": mark("irrelevant"); break;
		case "u": mark("unsure"); break;
		case "n": focusNote(); break;
		case "o": toggleAbstract(); break;
		case "1": case "2": case "3": case "4": case "5": case "6": case "7": case "8": case "9":
			exclude(Number(ev.key) - 1);
			break;
		case "Enter":
			// Enter keeps its own meaning on links, buttons and summaries,
			// and outside the papers.
			if (t && (t.tagName === "A" || t.tagName === "BUTTON" || t.tagName === "SUMMARY")) return;
			if (!paperOf(t)) return;
			toggleAbstract();
			break;
		default: return;
		}
		ev.preventDefault();
	});
})();
