@testable import SharedStore
import Testing
import TestSupport

/// S3's XML answers read by libxml2 (Foundation's XMLParser), as AWS documents them: a ListObjectsV2 page with S3's
/// namespace and an escaped key, an error document, and what is not XML at all.
@Suite("S3 XML", .timeLimit(.minutes(5)))
struct S3XMLTests {
    @Test("a ListObjectsV2 page: sizes, truncation and the continuation token by path; entities decoded; nested names not confused")
    func listing() throws {
        let page = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Name>tiles</Name><Prefix>fleet/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>
              <Contents><Key>fleet/objects/ab/ab12</Key><LastModified>2026-11-27T10:00:00.000Z</LastModified>
                <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>1397</Size><StorageClass>STANDARD</StorageClass></Contents>
              <Contents><Key>fleet/a&amp;b &lt;c&gt;</Key><Size>30</Size><Owner><ID>x</ID><Size>999</Size></Owner></Contents>
              <NextContinuationToken><![CDATA[1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=]]></NextContinuationToken>
            </ListBucketResult>
            """
        let xml = try #require(S3XML(Array(page.utf8)))
        #expect(xml.values("ListBucketResult", "Contents", "Size") == ["1397", "30"])
        #expect(xml.values("ListBucketResult", "Contents", "Key") == ["fleet/objects/ab/ab12", "fleet/a&b <c>"])
        #expect(xml.value("ListBucketResult", "Contents", "ETag") == "\"9b2cf535f27731c974343645a3985328\"")
        #expect(xml.value("ListBucketResult", "IsTruncated") == "true")
        #expect(xml.value("ListBucketResult", "NextContinuationToken") == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
    }

    @Test("an error document's code; what is not well-formed XML is nil")
    func errors() {
        let error = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>x</BucketName></Error>"
        #expect(S3XML(Array(error.utf8))?.value("Error", "Code") == "NoSuchBucket")
        #expect(S3XML(Array("<Error><Code>Oops</Error>".utf8)) == nil)
        #expect(S3XML(Array("<html>Bad Gateway".utf8)) == nil)
        #expect(S3XML([]) == nil)
    }
}
