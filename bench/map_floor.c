// The floor under any reader that maps its input: for each file named on stdin, open, fstat,
// mmap read-only and close it, then (mode 1) touch the ELF header or (mode 2) also walk every
// entry of .dynsym, the one table a symbol-checking loader model must read whole. Nothing is
// parsed beyond that and nothing is unmapped before exit, as in `envdoctor ldd`. Mode 3 is the
// alternative to mapping: pread the header, the section headers and the tables the loader model
// reads (.dynsym, .dynstr, the hash tables, the version tables, .dynamic) into memory kept until
// exit. bench/table.py times modes 1-3 on the same files as the tools, on one core.
//
//   cc -O2 -o map_floor bench/map_floor.c && ./map_floor 2 < files
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// Mode 3: the tables read into memory of their own, one pread each.
static unsigned long read_tables(int fd, size_t size) {
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size || eh.e_shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr))
    return 0;
  Elf64_Shdr* sh = malloc(eh.e_shnum * sizeof(Elf64_Shdr));
  unsigned long sum = 0;
  if (sh && pread(fd, sh, eh.e_shnum * sizeof(Elf64_Shdr), (off_t)eh.e_shoff) == (ssize_t)(eh.e_shnum * sizeof(Elf64_Shdr))) {
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
      unsigned t = sh[i].sh_type;
      int wanted = t == SHT_DYNSYM || t == SHT_GNU_HASH || t == SHT_HASH || t == SHT_GNU_versym || t == SHT_GNU_verneed ||
                   t == SHT_GNU_verdef || t == SHT_DYNAMIC || (t == SHT_STRTAB && (sh[i].sh_flags & SHF_ALLOC));
      if (!wanted || sh[i].sh_size == 0 || sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset) continue;
      unsigned char* table = malloc(sh[i].sh_size);  // kept until exit, as a parsed file would be
      if (table && pread(fd, table, sh[i].sh_size, (off_t)sh[i].sh_offset) > 0) sum += table[sh[i].sh_size / 2];
    }
  }
  free(sh);
  return sum;
}

int main(int argc, char** argv) {
  int mode = argc > 1 ? atoi(argv[1]) : 2;
  char line[4096];
  unsigned long sum = 0;
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    int fd = open(line, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
      close(fd);
      continue;
    }
    size_t size = (size_t)st.st_size;
    if (mode == 3) {
      sum += read_tables(fd, size);
      close(fd);
      continue;
    }
    const unsigned char* p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED || mode == 0) continue;
    const Elf64_Ehdr* eh = (const Elf64_Ehdr*)p;
    sum += eh->e_phnum;
    if (mode < 2 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr)) continue;
    if (eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr)) continue;
    const Elf64_Shdr* sh = (const Elf64_Shdr*)(p + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; ++i) {
      if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset) continue;
      const Elf64_Sym* s = (const Elf64_Sym*)(p + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) sum += s[k].st_info;
    }
  }
  printf("%lu\n", sum);  // keeps the reads
  return 0;
}
