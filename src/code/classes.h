/*
 * src/code/classes.h — class ids: a small number per Java class, shared by the
 * samples that name a class (an allocation's object, a contended monitor's
 * object), resolved to a name once.
 *
 * A class's id lives in its class object's JVMTI tag (RP_CLASS_TAG | id), so
 * a class's signature is read (GetClassSignature) and converted to its Java name
 * ("int[][]", "java.lang.Long") only the first time a sample names it; later
 * lookups cost one GetTag. Names live in blocks that are never freed, so a name
 * returned once stays valid for the process (the flusher reads them without a
 * lock). Without can_tag_objects (another agent holds it) a lookup finds the id
 * by name, under the mutex, with a linear search over the names: slower, but
 * ids and memory stay in proportion to the classes seen, not to the samples.
 *
 * Threads: rp_class_id on any thread where JVMTI is usable (the allocation and
 * monitor callbacks, on application threads); it takes a mutex only to issue a
 * new id (a class's first sample). rp_class_name on any thread, lock-free.
 */
#ifndef RINGPROF_SRC_CLASSES_H
#define RINGPROF_SRC_CLASSES_H

#include <stdint.h>
#include <jvmti.h>

/* A class object's tag is RP_CLASS_TAG | id. Other tags the agent sets (alloc.c's
 * live objects) keep this bit clear, so ObjectFree can tell them apart. */
#define RP_CLASS_TAG (1ull << 63)

/* The id of `klass`, from its tag, or issued now. @return the id (>= 1), or 0 if
 * the signature could not be read or there is no memory for the name. Two threads
 * racing on a new class may issue two ids with the same name. */
uint32_t rp_class_id(jvmtiEnv *jvmti, jclass klass);

/* A class id's Java name ("byte[]", "java.lang.Long"), or NULL for an id that was
 * never issued. The string lives for the process. */
const char *rp_class_name(uint32_t id);

#endif
