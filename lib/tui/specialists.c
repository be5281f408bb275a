/* specialists.c - the specialist catalogue as the terminal prints it */
#include <string.h>

#include "tui/tui.h"

int
tui_specialists(FILE *out)
{
	struct specialists c;
	struct buf b;
	const struct specialist *x;
	size_t i;

	specialists_init(&c);
	if (specialists_load(&c) < 0) {
		specialists_release(&c);
		return -1;
	}
	buf_init(&b);
	if (!c.n)
		buf_adds(&b, "No specialists are configured.\n");
	else
		buf_adds(&b, "Research specialists (the task tool; each "
		    "delegation is reviewed like any action):\n");
	for (i = 0; i < c.n; i++) {
		x = &c.v[i];
		buf_printf(&b, "  %-26s %-28s %s, ", x->name, x->label,
		    x->capability);
		if (x->available)
			buf_printf(&b, "available, %d iterations, $%.2f\n",
			    x->iterations, x->budget);
		else
			buf_printf(&b, "unavailable: %s\n", x->reason);
		buf_printf(&b, "  %-26s %s\n", "", x->description);
	}
	term_put_safe(out, buf_cstr(&b));
	fflush(out);
	buf_release(&b);
	specialists_release(&c);
	return 0;
}

int
tui_specialists_json(FILE *out)
{
	struct buf b;
	int rc = 0;

	buf_init(&b);
	if (specialists_list_json(&b) < 0)
		rc = -1;
	else {
		buf_addc(&b, '\n');
		if (fwrite(b.p, 1, b.len, out) != b.len || fflush(out))
			rc = hw_err_sys("cannot write 'stdout'");
	}
	buf_release(&b);
	return rc;
}
