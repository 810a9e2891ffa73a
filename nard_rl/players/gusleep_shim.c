/* Speed shim for driving GNU Backgammon from a script (loaded with LD_PRELOAD).
 *
 * gnubg's main thread waits for its evaluation workers by sleeping 10 ms between polls,
 * so every scripted evaluation costs at least 10 ms however little work it needs.  This
 * replaces GLib's g_usleep: a 10 ms poll becomes a 50 us one, and any other sleep keeps
 * its length.  Independent code; nothing here comes from gnubg.
 */
#include <time.h>

#define POLL_US 10000UL
#define SHORT_POLL_US 50UL

void g_usleep(unsigned long microseconds)
{
    struct timespec ts;
    if (microseconds == POLL_US)
        microseconds = SHORT_POLL_US;
    ts.tv_sec = (time_t)(microseconds / 1000000UL);
    ts.tv_nsec = (long)(microseconds % 1000000UL) * 1000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}
