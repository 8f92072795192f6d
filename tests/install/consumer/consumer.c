/* Compiles and links against the installed headers and libraries. */
#include <tierio.h>
#include <stdio.h>

int main(void)
{
    printf("tierio %s, hint %s\n", TIERIO_VERSION_STRING, TIO_WIN_HINT_FILENAME);
    return (void *)tio_win_allocate != NULL ? 0 : 1;
}
