// Quarry's only script: keyboard marking on the result review. Kept in a
// file (not inline) because the Content-Security-Policy allows no inline
// scripts. Everything here is an enhancement; the forms work without it.
//   j / k  move to the next / previous paper
//   r / i / u  mark the current paper relevant / irrelevant / unsure
(function () {
	"use strict";
	var current = -1;

	function papers() {
		return Array.prototype.slice.call(document.querySelectorAll('[data-testid="paper"]'));
	}

	function focusPaper(i) {
		var list = papers();
		if (list.length === 0) return;
		current = Math.max(0, Math.min(list.length - 1, i));
		list.forEach(function (p, j) { p.setAttribute("aria-current", j === current ? "true" : "false"); });
		list[current].focus();
		list[current].scrollIntoView({ block: "nearest" });
	}

	function mark(value) {
		var list = papers();
		if (current < 0 || current >= list.length) return;
		var radio = list[current].querySelector('input[data-mark="' + value + '"]');
		if (radio) radio.checked = true;
	}

	document.addEventListener("keydown", function (ev) {
		if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
		var t = ev.target;
		if (t && (t.tagName === "INPUT" && t.type !== "radio" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
		if (papers().length === 0) return;
		switch (ev.key) {
		case "j": focusPaper(current + 1); break;
		case "k": focusPaper(current - 1); break;
		case "r": mark("relevant"); break;
		case "i": mark("irrelevant"); break;
		case "u": mark("unsure"); break;
		default: return;
		}
		ev.preventDefault();
	});
})();
