/*
 * managed.c - which routes use the platform identity (credential class
 * managed-identity): those a managed-identity connection serves
 */
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

int
route_identity(struct model_route *r)
{
	struct platform_detection pd;
	const struct jval *list, *c = NULL;
	const char *id;
	struct jval *doc;
	struct arena a;
	int rc = -1;

	arena_init(&a);
	platform_detect(&pd);
	if (connections_load(&a, pd.id, &doc) < 0)
		goto out;
	list = json_get(doc, "connections");
	for (size_t i = 0; !c && list && i < list->n; i++)
		if (json_is_str(json_get(list->u.a[i], "credential_kind"),
		    "managed-identity") && json_is_str(json_get(list->u.a[i],
		    "base_url"), r->base_url))
			c = list->u.a[i];
	rc = 0;
	if (!c)
		goto out;
	id = json_get_str(c, "connection_id");
	if ((rc = identity_allowed(id)) < 0)
		goto out;
	r->managed = 1;
	r->isolated = word_in(platform_isolated_sources(
	    platform_adapter(pd.id)), id);
	rc = 1;
out:
	arena_release(&a);
	return rc;
}
