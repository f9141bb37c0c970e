/* SPDX-License-Identifier: MIT */
/*
 * explainer: the argument parsing of examples/ibkeys.c, the program
 * itself (built without its main()) run on the fuzzer's arguments. From
 * the input: the command (one of the program's, help, or an unknown
 * word), then up to six NUL-separated arguments, each in a heap block of
 * exactly its length. `port` reads a sysfs tree that does not exist
 * whatever --sysfs the input names. The exit status must be what the
 * usage text promises, decided here independently:
 *  - 2 for a wrong number of arguments;
 *  - pkey, qkey, rkey, range: 0 exactly when every argument is a number
 *    ("decimal or 0x-prefixed hex", nothing else) within the field's
 *    width (model.h), else 1;
 *  - gid: 0 exactly when glibc's inet_pton(AF_INET6) reads it, else 1;
 *  - guid: 0 exactly for the two GUID forms (model.h), else 1;
 *  - roce: 0 exactly for a MAC aa:bb:cc:dd:ee:ff or an address glibc
 *    reads as IPv4 or IPv6, else 1;
 *  - mgid, port: 0, 1 or 2, and mgid 0 only for a valid P_Key;
 * with ASan and UBSan watching every byte the parsers read. Output goes
 * to /dev/null.
 */
#define IBKEYS_NO_MAIN
#include "examples/ibkeys.c"

#include <fcntl.h>

#include "model.h"

#define MAX_ARGS 6
#define NO_SYSFS "/nonexistent/ibkeys-fuzz"

static int null_fd = -1, stderr_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	null_fd = open("/dev/null", O_WRONLY);
	stderr_fd = dup(2);
	if (null_fd < 0 || stderr_fd < 0 || dup2(null_fd, 1) < 0)
		abort();
	return 0;
}

static bool all_numbers(char **args, int n, uint64_t max)
{
	uint64_t v;

	for (int i = 0; i < n; i++)
		if (!model_number(args[i], max, &v))
			return false;
	return true;
}

static bool is_mac(const char *s)
{
	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 17; i++)
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The status the usage text promises, or -1 where only the range is. */
static int expected(const char *cmd, char **args, int n)
{
	static const struct { const char *name; int min, max; } counts[] = {
		{ "pkey", 1, 2 }, { "qkey", 1, 1 }, { "gid", 1, 1 },
		{ "mgid", 1, 3 }, { "roce", 1, 1 }, { "guid", 1, 1 },
		{ "rkey", 1, 1 }, { "range", 4, 4 }, { "port", 0, 5 },
	};
	uint8_t buf[16];
	uint64_t v;
	size_t i;

	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return 0;
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (!strcmp(cmd, counts[i].name))
			break;
	if (i == sizeof(counts) / sizeof(counts[0]))
		return 2;			/* unknown command */
	if (n < counts[i].min || n > counts[i].max)
		return 2;
	if (!strcmp(cmd, "pkey"))
		return all_numbers(args, n, 0xffff) ? 0 : 1;
	if (!strcmp(cmd, "qkey") || !strcmp(cmd, "rkey"))
		return all_numbers(args, n, 0xffffffffu) ? 0 : 1;
	if (!strcmp(cmd, "range"))
		return all_numbers(args, n, UINT64_MAX) ? 0 : 1;
	if (!strcmp(cmd, "gid"))
		return inet_pton(AF_INET6, args[0], buf) == 1 ? 0 : 1;
	if (!strcmp(cmd, "guid"))
		return model_guid_pton(args[0], &v) ? 0 : 1;
	if (!strcmp(cmd, "roce"))
		return is_mac(args[0]) || inet_pton(AF_INET, args[0], buf) == 1 ||
		       inet_pton(AF_INET6, args[0], buf) == 1 ? 0 : 1;
	return -1;				/* mgid, port */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cmds[] = {
		"pkey", "qkey", "gid", "mgid", "roce", "guid", "rkey",
		"range", "port", "help", "--help", "frobnicate",
	};
	struct fz f = fz_init(data, size);
	char *argv[MAX_ARGS + 5], *owned[MAX_ARGS];
	const char *cmd = cmds[fz_below(&f, sizeof(cmds) / sizeof(cmds[0]))];
	int n = 0, argc = 0, status, want, k;

	argv[argc++] = (char *)"ibkeys";
	argv[argc++] = (char *)cmd;
	if (!strcmp(cmd, "port")) {		/* never the host's sysfs */
		argv[argc++] = (char *)"--sysfs";
		argv[argc++] = (char *)NO_SYSFS;
	}
	while (!fz_empty(&f) && n < MAX_ARGS) {
		const uint8_t *end = memchr(f.p, 0, f.n);
		size_t len = end ? (size_t)(end - f.p) : f.n;

		owned[n] = fz_storage(len + 1);
		fz_bytes(&f, owned[n], len);
		owned[n][len] = '\0';
		fz_u8(&f);			/* the separator */
		argv[argc++] = owned[n++];
	}
	for (k = 3; !strcmp(cmd, "port") && k < argc; k++)
		if (!strcmp(argv[k - 1], "--sysfs"))
			argv[k] = (char *)NO_SYSFS;
	argv[argc] = NULL;

	fflush(stdout);
	dup2(null_fd, 2);
	status = ibkeys(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(stderr_fd, 2);

	want = expected(cmd, argv + 2, argc - 2);
	FZ_CHECK(want < 0 ? status >= 0 && status <= 2 : status == want,
		 "ibkeys %s '%s' (%d arguments): exit %d, expected %d", cmd,
		 argc > 2 ? argv[2] : "", argc - 2, status, want);
	if (!strcmp(cmd, "mgid") && status == 0) {
		uint64_t pkey = 0;

		FZ_CHECK(model_number(argv[2], 0xffff, &pkey) &&
			 model_pkey_valid((uint16_t)pkey),
			 "mgid accepted P_Key '%s'", argv[2]);
	}
	for (k = 0; k < n; k++)
		free(owned[k]);
	return 0;
}
