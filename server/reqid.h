/*
 * reqid.h - request ids for the x-amzn-RequestId header and the server's log lines.
 *
 * DynamoDB's request ids are 52 characters of [0-9A-V] (base32hex, 260 random bits), e.g.
 * "JV6DMQ3JB0VJ7GK8ET5CF5G5KBVV4KQNSO5AEMVJF66Q9ASUAAJG". kura-server makes them the same
 * shape from a per-thread generator seeded from the kernel (getrandom), so making one costs
 * a few multiplications and no lock. They are unique in practice, not secret.
 */
#ifndef KURA_SERVER_REQID_H
#define KURA_SERVER_REQID_H

#define SRV_REQID_LEN 52

/* Writes a new id and a NUL into out. Thread-safe. */
void srv_reqid_new(char out[SRV_REQID_LEN + 1]);

#endif
