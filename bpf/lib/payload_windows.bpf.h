/* Payload capture's copy of a call in windows (payload_emit with `windows`): included by
 * payload_capture.bpf.h after the scratch map, the payload ring and payload_count it uses. */
#pragma once

/* Windows: a call larger than one record, copied in records of SKEWSCOPE_PAYLOAD_MAX bytes (the
 * socket-layer family only, see payload_emit). The walk over the call's buffer (the buffer itself,
 * or its iovec array read one segment at a time) is one bpf_loop (5.17+; every kernel with the
 * socket-layer tracepoints has it): open-coded, a walk of hundreds of segments and windows was
 * more than the verifier's budget of a million instructions, where bpf_loop's callback is
 * verified once. A Kafka produce request from librdkafka is two segments per record (its header,
 * its value); a fetch response, hundreds of KiB in one. */

/* Submits the scratch's current window as a record: the call's bytes from the window's first on
 * (all that is left of the call when it is the last window, else the window's own size). */
static __always_inline int payload_submit_window(struct payload_scratch *s, struct payload_walk *w, int last)
{
	struct skewscope_payload_event *e = &s->hdr;
	__u32 got = w->at;
	barrier_var(got);
	got = payload_helper_size(got > SKEWSCOPE_PAYLOAD_MAX ? SKEWSCOPE_PAYLOAD_MAX : got);
	__u64 bytes = last ? w->ret - w->window : SKEWSCOPE_PAYLOAD_MAX;
	e->seq = w->seq + w->window;
	e->bytes = bytes > 0xffffffffULL ? 0xffffffffU : (__u32)bytes;
	e->captured_len = got;
	/* Silent until an eighth of the ring may be queued: the reader then wakes at once instead of
	 * at its next timed pass, which leaves it 7/8 of the ring of slack for a late pass. Counted
	 * per CPU (each CPU up to its share of the eighth): asking the ring how full it is read its
	 * positions, cache lines the reader writes, and was a twelfth of a copied call's time. */
	__u32 zero = 0;
	__u64 *unwoken = bpf_map_lookup_elem(&payload_unwoken_bytes, &zero);
	__u64 size = sizeof(s->hdr) + got;
	__u8 wake = !unwoken || *unwoken + size >= payload_wake_bytes;
	if (payload_reader_idle) { /* the reader waits long: this record ends its wait */
		payload_reader_idle = 0;
		wake = 1;
	}
	if (bpf_ringbuf_output(&payloads, &s->hdr, sizeof(s->hdr) + got,
			       wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		payload_count(SKEWSCOPE_PCNT_RINGBUF_FULL);
		w->ring_full = 1;
		return 0;
	}
	payload_count(SKEWSCOPE_PCNT_EMITTED);
	if (unwoken)
		*unwoken = wake ? 0 : *unwoken + size;
	if (wake)
		payload_count(SKEWSCOPE_PCNT_WAKEUPS);
	w->window += got;
	w->at = 0;
	return 1;
}

/* One pass of the walk (bpf_loop's callback; 1 stops it): reads one iovec, copies one piece of a
 * segment into the window, or, with `more`, submits a full window. */
static long payload_walk_step(__u64 index, void *ctx)
{
	__u32 zero = 0;
	struct payload_scratch *s = bpf_map_lookup_elem(&payload_scratch, &zero);
	if (!s)
		return 1;
	struct payload_walk *w = &s->walk;
	if (w->done >= w->want || w->stop || w->ring_full)
		return 1;
	if (w->at >= SKEWSCOPE_PAYLOAD_MAX) {
		if (!w->more || !payload_submit_window(s, w, 0))
			return 1;
		return 0;
	}
	if (!w->left) {
		if (!w->iov || w->next >= w->count)
			return 1;
		if (w->next >= SKEWSCOPE_PAYLOAD_WINDOW_IOV) {
			payload_count(SKEWSCOPE_PCNT_IOV_TRUNCATED);
			w->stop = 1;
			return 1;
		}
		struct payload_user_iovec seg;
		if (bpf_probe_read_user(&seg, sizeof(seg), (const void *)(w->iov + w->next * sizeof(seg)))) {
			payload_count(SKEWSCOPE_PCNT_READ_FAILED);
			w->stop = 1;
			return 1;
		}
		w->next++;
		w->base = seg.base;
		w->left = seg.len;
		return 0;
	}
	__u32 at = w->at;
	barrier_var(at);
	at &= SKEWSCOPE_PAYLOAD_MAX - 1; /* < MAX: the window is not full (checked above) */
	__u64 room = SKEWSCOPE_PAYLOAD_MAX - at;
	if (room > w->want - w->done)
		room = w->want - w->done;
	/* Masks, not comparisons, bound what the verifier sees: n < 2 MAX, at < MAX. */
	__u32 n = payload_helper_size(w->left < room ? w->left : room);
	if (bpf_probe_read_user(&s->data[at], n, (const void *)w->base)) {
		payload_count(SKEWSCOPE_PCNT_READ_FAILED);
		w->stop = 1;
		return 1;
	}
	w->at = at + n;
	w->done += n;
	w->base += n;
	w->left -= n;
	return 0;
}

/* Walks until the window is full (more = 0) or the call's `want` bytes are copied in windows. */
static __always_inline void payload_walk_run(struct payload_walk *w, __u8 more)
{
	w->more = more;
	bpf_loop(2 * SKEWSCOPE_PAYLOAD_WINDOW_IOV + 2 * (SKEWSCOPE_PAYLOAD_CALL_MAX / SKEWSCOPE_PAYLOAD_MAX),
		 payload_walk_step, NULL, 0);
}

/* Starts the walk of an armed call's buffer: 0, or -1 when its message cannot be read (counted). */
static __always_inline int payload_walk_start(struct payload_walk *w, const struct payload_arm *arm, long ret,
					      __u32 want, __u32 seq)
{
	__builtin_memset(w, 0, sizeof(*w));
	w->want = want;
	w->seq = seq;
	w->ret = (__u64)ret;
	if (arm->shape == SKEWSCOPE_SHAPE_BUFFER) {
		w->base = arm->buf;
		w->left = (__u64)ret;
		return 0;
	}
	w->iov = arm->buf;
	w->count = arm->len;
	if (arm->shape == SKEWSCOPE_SHAPE_MSGHDR) {
		/* struct user_msghdr on LP64: msg_iov at 16, msg_iovlen at 24 (a user ABI, fixed). */
		__u64 fields[2];
		if (bpf_probe_read_user(fields, sizeof(fields), (const void *)(arm->buf + 16))) {
			payload_count(SKEWSCOPE_PCNT_READ_FAILED);
			w->stop = 1;
			return -1;
		}
		w->iov = fields[0];
		w->count = fields[1];
	}
	return 0;
}
