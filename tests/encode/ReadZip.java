// Reads a one-entry zip with java.util.zip.ZipInputStream (front to back, no central directory),
// as DHIS2 and other Java programs read an upload.
//
// usage: java ReadZip.java ZIP ENTRY_NAME SIZE CRC32
// Prints "ok" and exits 0 if the one entry is ENTRY_NAME with SIZE bytes of CRC-32 CRC32.
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

public class ReadZip {
  public static void main(String[] args) throws Exception {
    String name = args[1];
    long size = Long.parseLong(args[2]);
    long crc = Long.parseLong(args[3]);
    try (ZipInputStream zip =
        new ZipInputStream(new BufferedInputStream(new FileInputStream(args[0])))) {
      ZipEntry entry = zip.getNextEntry();
      if (entry == null || !entry.getName().equals(name)) {
        throw new AssertionError("entry " + (entry == null ? "missing" : entry.getName()));
      }
      CRC32 check = new CRC32();
      byte[] buffer = new byte[1 << 16];
      long read = 0;
      for (int n; (n = zip.read(buffer)) > 0; ) {
        check.update(buffer, 0, n);
        read += n;
      }
      if (read != size || check.getValue() != crc) {
        throw new AssertionError("read " + read + " bytes, CRC-32 " + check.getValue());
      }
      // The data descriptor was read: the entry now knows its sizes and CRC.
      if (entry.getSize() != size || entry.getCrc() != crc) {
        throw new AssertionError("entry says " + entry.getSize() + " bytes, CRC " + entry.getCrc());
      }
      if (zip.getNextEntry() != null) throw new AssertionError("a second entry");
    }
    System.out.println("ok");
  }
}
